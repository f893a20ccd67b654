import { createHash, randomBytes } from 'node:crypto';
import { createReadStream, type Dirent } from 'node:fs';
import { mkdir, open, readdir, readFile, rename, stat, unlink } from 'node:fs/promises';
import path from 'node:path';
import { NotFoundError, StoreUnavailableError } from '@screenfleet/contracts';
import { ensurePrivateDir, PRIVATE_DIR_MODE, PRIVATE_FILE_MODE } from '@screenfleet/runtime';
import { ChecksumMismatchError } from './archive-errors';
import { checkArchiveKey, checkArchivePrefix, checkSha256 } from './archive-key';
import type { ArchiveObject, ArchiveStore } from './archive-store';

export interface FilesystemArchiveStoreOptions {
  /** The directory that holds the archive; each key is a path below it. */
  root: string;
}

// Errors that mean the volume is failing, gone or full for now, as opposed to a bad request or
// a permission problem (a configuration error that retrying does not fix).
const unavailableCodes = new Set([
  'EIO',
  'ENOTCONN',
  'ESTALE',
  'ETIMEDOUT',
  'EHOSTDOWN',
  'ENOSPC',
  'EDQUOT',
  'EROFS',
  'EAGAIN',
  'EBUSY',
  'ENXIO',
]);

/**
 * The archive in a local directory (the embedded mode's archive, or a mounted volume). Writes are
 * atomic and durable: a temp file beside the target, fsync, rename, fsync of the directory, so a
 * crash leaves either the old object or the new one, never a torn one.
 */
export function createFilesystemArchiveStore(options: FilesystemArchiveStoreOptions): ArchiveStore {
  const root = path.resolve(options.root);

  function pathOf(key: string): string {
    checkArchiveKey(key);
    const target = path.join(root, ...key.split('/'));
    // The key rule already forbids escapes; this is the belt to its braces.
    if (!target.startsWith(root + path.sep)) throw new Error(`key ${key} resolves outside root`);
    return target;
  }

  /** A missing root is an unmounted or removed volume: retry later, never "object not found". */
  async function requireRoot(): Promise<void> {
    const info = await stat(root).catch((error: unknown) => {
      if (errorCode(error) === 'ENOENT' || errorCode(error) === 'ENOTDIR') return undefined;
      throw error;
    });
    if (!info?.isDirectory()) {
      throw new StoreUnavailableError(
        `archive directory ${root} is missing (is its volume mounted?)`,
      );
    }
  }

  async function guarded<T>(operation: string, work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (error) {
      throw toStoreError(error, operation);
    }
  }

  return {
    // The archive holds every archived screen's text: its owner's only (0700, objects 0600).
    ensureReady: () =>
      guarded('ensureReady', () => {
        ensurePrivateDir(root, 'archive directory (ARCHIVE_DIR)');
        return Promise.resolve();
      }),

    put: (key, body, { sha256 }) =>
      guarded('put', async () => {
        const target = pathOf(key);
        checkSha256(sha256);
        const actual = sha256Hex(body);
        if (actual !== sha256) {
          throw new ChecksumMismatchError(
            `put ${key}: the body's SHA-256 is ${actual}, not the ${sha256} given; nothing was written`,
          );
        }
        await requireRoot();
        const dir = path.dirname(target);
        const firstCreated = await mkdir(dir, { recursive: true, mode: PRIVATE_DIR_MODE });
        const temp = path.join(
          dir,
          `.${path.basename(target)}.${randomBytes(6).toString('hex')}.partial`,
        );
        try {
          const file = await open(temp, 'wx', PRIVATE_FILE_MODE);
          try {
            await file.writeFile(body);
            await file.sync();
          } finally {
            await file.close();
          }
          await rename(temp, target);
        } catch (error) {
          await unlink(temp).catch(() => undefined);
          throw error;
        }
        // The rename is durable once its directory is; new directories need their parents synced.
        await syncDir(dir);
        if (firstCreated) {
          for (let d = dir; d !== path.dirname(firstCreated); d = path.dirname(d)) {
            await syncDir(path.dirname(d));
          }
        }
      }),

    verify: (key, sha256) =>
      guarded('verify', async () => {
        const target = pathOf(key);
        checkSha256(sha256);
        try {
          const hash = createHash('sha256');
          for await (const chunk of createReadStream(target)) hash.update(chunk as Buffer);
          return hash.digest('hex') === sha256;
        } catch (error) {
          if (!isMissing(error)) throw error;
          await requireRoot();
          return false;
        }
      }),

    size: (key) =>
      guarded('size', async () => {
        const target = pathOf(key);
        try {
          return (await stat(target)).size;
        } catch (error) {
          if (!isMissing(error)) throw error;
          await requireRoot();
          return null;
        }
      }),

    get: (key) =>
      guarded('get', async () => {
        const target = pathOf(key);
        try {
          return await readFile(target);
        } catch (error) {
          if (!isMissing(error)) throw error;
          await requireRoot();
          throw new NotFoundError(`archive object ${key} not found`);
        }
      }),

    list: (prefix) => listObjects(root, prefix, requireRoot),

    delete: (key) =>
      guarded('delete', async () => {
        const target = pathOf(key);
        try {
          await unlink(target);
        } catch (error) {
          if (!isMissing(error)) throw error;
          await requireRoot();
          return;
        }
        await syncDir(path.dirname(target));
        // Emptied directories stay: removing them would race a concurrent put into the same one.
      }),

    removeUnfinished: () =>
      guarded('removeUnfinished', async () => {
        await requireRoot();
        return removeTempFiles(root);
      }),

    close: () => Promise.resolve(),
  };
}

/** The temp file a put writes beside its target, named as put names it (never a valid key). */
const TEMP_FILE = /^\..+\.[0-9a-f]{12}\.partial$/;

/** Removes every temp file below `dir` (puts killed before their rename); their count and bytes. */
async function removeTempFiles(dir: string): Promise<{ count: number; bytes: number }> {
  const removed = { count: 0, bytes: 0 };
  let entries: Dirent[];
  try {
    entries = await readdir(dir, { withFileTypes: true });
  } catch (error) {
    if (isMissing(error)) return removed; // removed meanwhile
    throw error;
  }
  for (const entry of entries) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) {
      const below = await removeTempFiles(full);
      removed.count += below.count;
      removed.bytes += below.bytes;
    } else if (entry.isFile() && TEMP_FILE.test(entry.name)) {
      const { size } = await stat(full);
      await unlink(full).catch((error: unknown) => {
        if (!isMissing(error)) throw error;
      });
      removed.count += 1;
      removed.bytes += size;
    }
  }
  return removed;
}

/**
 * Walks only the directories that can hold keys with this prefix, each directory's entries in the
 * order their keys sort (a directory "a" sorts as "a/"), so keys come in byte order like S3's
 * ListObjectsV2 without collecting them all first. Hidden entries (temp files) are skipped.
 */
async function* listObjects(
  root: string,
  prefix: string,
  requireRoot: () => Promise<void>,
): AsyncGenerator<ArchiveObject> {
  checkArchivePrefix(prefix);
  try {
    await requireRoot();
    const start = prefix.slice(0, prefix.lastIndexOf('/') + 1); // "" or "a/b/"
    yield* walk(root, start, prefix);
  } catch (error) {
    throw toStoreError(error, 'list');
  }
}

async function* walk(root: string, dirKey: string, prefix: string): AsyncGenerator<ArchiveObject> {
  let entries: Dirent[];
  try {
    entries = await readdir(path.join(root, ...dirKey.split('/')), { withFileTypes: true });
  } catch (error) {
    if (isMissing(error)) return;
    throw error;
  }
  const sorted = entries
    .filter((entry) => !entry.name.startsWith('.') && (entry.isFile() || entry.isDirectory()))
    .map((entry) => ({
      entry,
      sortKey: Buffer.from(entry.name + (entry.isDirectory() ? '/' : '')),
    }))
    .sort((a, b) => Buffer.compare(a.sortKey, b.sortKey));
  for (const { entry } of sorted) {
    const key = dirKey + entry.name;
    if (entry.isDirectory()) {
      const sub = `${key}/`;
      if (sub.startsWith(prefix) || prefix.startsWith(sub)) yield* walk(root, sub, prefix);
    } else if (key.startsWith(prefix)) {
      const info = await stat(path.join(root, ...key.split('/'))).catch((error: unknown) => {
        if (isMissing(error)) return undefined; // deleted while listing
        throw error;
      });
      if (info) yield { key, size: info.size };
    }
  }
}

async function syncDir(dir: string): Promise<void> {
  const handle = await open(dir, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

function sha256Hex(body: Buffer): string {
  return createHash('sha256').update(body).digest('hex');
}

function toStoreError(error: unknown, operation: string): unknown {
  if (!(error instanceof Error) || !unavailableCodes.has(errorCode(error) ?? '')) return error;
  return new StoreUnavailableError(
    `archive store unavailable during ${operation}: ${error.message}`,
    {
      cause: error,
    },
  );
}

// Not `instanceof Error`: Node's own errors come from another realm under jest.
function errorCode(error: unknown): string | undefined {
  return typeof error === 'object' &&
    error !== null &&
    'code' in error &&
    typeof error.code === 'string'
    ? error.code
    : undefined;
}

/** No object at that path: absent, or a directory of other keys (key "a" beside "a/b"). */
function isMissing(error: unknown): boolean {
  const code = errorCode(error);
  return code === 'ENOENT' || code === 'ENOTDIR' || code === 'EISDIR';
}
