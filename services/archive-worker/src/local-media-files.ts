import { realpathSync } from 'node:fs';
import { readFile, realpath, stat, unlink } from 'node:fs/promises';
import path from 'node:path';
import type { MediaCheck, MediaFiles } from './domain/media-files';

/**
 * Media files confined to `root`: a file_path is used only when it is absolute, has no ".."
 * segment, is in normal form, is its own real path (no symlink anywhere on it, so each file has
 * exactly one accepted spelling) and is a regular file below the root's real path. Anything else is refused and never read or deleted. `remove` resolves again right before
 * unlinking, so a symlink swapped in after the check cannot point the delete elsewhere.
 */
export function createLocalMediaFiles(root: string): MediaFiles {
  const realRoot = realpathSync(path.resolve(root));
  const below = (real: string) => real.startsWith(realRoot + path.sep);

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

function refused(reason: string): MediaCheck {
  return { kind: 'refused', reason };
}

function codeOf(error: unknown): string | undefined {
  return (error as NodeJS.ErrnoException | undefined)?.code;
}
