import { realpathSync, statSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { link, lstat, mkdir, readFile, realpath, stat, unlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type {
  MediaCheck,
  MediaFiles,
  MediaRestoreOutcome,
  MediaWriter,
} from './domain/media-files';

/**
 * Media files confined to `root`: a file_path is used only when it is absolute, has no ".."
 * segment, is in normal form, is its own real path (no symlink anywhere on it, so each file has
 * exactly one accepted spelling) and is a regular file below the root's real path. Anything else is refused and never read or deleted. `remove` resolves again right before
 * unlinking, so a symlink swapped in after the check cannot point the delete elsewhere.
 */
export function createLocalMediaFiles(root: string): MediaFiles {
  const realRoot = realpathSync(path.resolve(root));
  const below = (real: string) => real.startsWith(realRoot + path.sep);
  const identity = statSync(realRoot);

  async function check(filePath: string): Promise<MediaCheck> {
    if (!path.isAbsolute(filePath)) return refused('not an absolute path');
    if (filePath.split(/[\\/]/).includes('..')) return refused('contains ".."');
    if (filePath.includes('\0')) return refused('contains NUL');
    // One spelling per file: the in-use check before a delete compares file_path strings, so
    // `root/m/./v.mp4` or a symlink alias must never stand for a file another item names.
    if (path.normalize(filePath) !== filePath) return refused('not in normal form');
    let real: string;
    try {
      real = await realpath(filePath);
    } catch (error) {
      if (codeOf(error) === 'ENOENT' || codeOf(error) === 'ENOTDIR') return { kind: 'missing' };
      throw error;
    }
    if (!below(real)) return refused(`${real} is outside the media root ${realRoot}`);
    if (real !== filePath) return refused(`not its real path (${real}): a symlink on the way`);
    const info = await stat(real);
    if (!info.isFile()) return refused('not a regular file');
    return { kind: 'inside', realPath: real, size: info.size };
  }

  return {
    async ready() {
      const now = await stat(realRoot).catch(() => undefined);
      if (!now || now.dev !== identity.dev || now.ino !== identity.ino) {
        throw new Error(
          `the media root ${realRoot} is not the directory it was at start (unmounted or replaced); archiving stopped so items do not leave without their media`,
        );
      }
    },
    check,
    async read(realPath) {
      const again = await check(realPath);
      if (again.kind !== 'inside' || again.realPath !== realPath) {
        throw new Error(`media file ${realPath} is no longer a file under the media root`);
      }
      return readFile(realPath);
    },
    async remove(realPath) {
      const again = await check(realPath);
      if (again.kind === 'missing') return;
      if (again.kind !== 'inside' || again.realPath !== realPath) {
        throw new Error(`media file ${realPath} is no longer a file under the media root`);
      }
      await unlink(realPath);
    },
  };
}

/**
 * Writes archived media files back to their own paths under `root`. The path must be one the
 * archive would have read (absolute, normal form, below the root's real path) and every
 * directory on it that exists must be its own real path (no symlink out). The file is written
 * beside its place and hard-linked in, which fails when anything is there already: an existing
 * file is never overwritten (same bytes: 'already'; different: 'conflict').
 */
export function createLocalMediaWriter(root: string): MediaWriter {
  const realRoot = realpathSync(path.resolve(root));
  const below = (p: string) => p.startsWith(realRoot + path.sep);

  async function existingAncestorIsReal(dir: string): Promise<boolean> {
    let at = dir;
    for (;;) {
      try {
        await lstat(at);
        break;
      } catch (error) {
        if (codeOf(error) !== 'ENOENT') throw error;
        at = path.dirname(at);
      }
    }
    return (await realpath(at)) === at && (at === realRoot || below(at));
  }

  async function sameBytes(filePath: string, bytes: Buffer): Promise<boolean> {
    const info = await lstat(filePath);
    return info.isFile() && (await readFile(filePath)).equals(bytes);
  }

  return {
    async restore(filePath, bytes): Promise<MediaRestoreOutcome> {
      if (
        !path.isAbsolute(filePath) ||
        filePath.includes('\0') ||
        filePath.split(/[\\/]/).includes('..') ||
        path.normalize(filePath) !== filePath ||
        !below(filePath)
      ) {
        return 'refused';
      }
      const dir = path.dirname(filePath);
      if (!(await existingAncestorIsReal(dir))) return 'refused';
      await mkdir(dir, { recursive: true });
      if ((await realpath(dir)) !== dir) return 'refused';
      const temporary = `${filePath}.restore-${randomBytes(6).toString('hex')}`;
      await writeFile(temporary, bytes, { flag: 'wx' });
      try {
        await link(temporary, filePath);
        return 'written';
      } catch (error) {
        if (codeOf(error) !== 'EEXIST') throw error;
        return (await sameBytes(filePath, bytes)) ? 'already' : 'conflict';
      } finally {
        await unlink(temporary);
      }
    },
  };
}

function refused(reason: string): MediaCheck {
  return { kind: 'refused', reason };
}

function codeOf(error: unknown): string | undefined {
  return (error as NodeJS.ErrnoException | undefined)?.code;
}
