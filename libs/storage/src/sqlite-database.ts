import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { StoreUnavailableError } from '@screenfleet/contracts';
import { ensurePrivateFile, PRIVATE_DIR_MODE } from '@screenfleet/runtime';
import {
  startSqliteCheckpointer,
  type SqliteCheckpointer,
  type SqliteCheckpointerOptions,
} from './sqlite-checkpointer';
import { openSqliteReaders, type SqliteReaders } from './sqlite-readers';
import { startSqliteWriter, type SqliteWriter, type WriterLimits } from './sqlite-writer';

export { openSqliteConnection } from './sqlite-connection';

export interface SqliteDatabaseOptions {
  /**
   * How long a write waits for another process's write lock (a second server on the same file, a
   * sqlite3 shell, the dead-letter replay) before it fails with SQLITE_BUSY
   * (StoreUnavailableError). The writer thread waits, not the event loop.
   */
  busyTimeoutMs?: number;
  /** Reader connections, so that many reads run at once (default 4). */
  readers?: number;
  /** Bounds on one group commit (default 5,000 items, 32 MiB of documents). */
  group?: Partial<WriterLimits>;
  /**
   * The WAL's length (pages) past which the checkpointer holds new reads until the WAL has
   * started over (sqlite-checkpointer.ts; default 4,096).
   */
  maxWalPages?: number;
  /** The checkpointer's backoff after a pass that did not start the WAL over, and its observer. */
  checkpointer?: Pick<SqliteCheckpointerOptions, 'drainBackoffMs' | 'onPass'>;
}

/**
 * One SQLite file, shared by the stores that live in it (content, archive state, dead letters).
 * Nothing here runs SQL on the caller's thread: writes go to the writer thread, which owns the
 * only write connection and commits queued writes in groups; reads go to reader connections
 * whose statements libsql runs on its own threads (sqlite-readers.ts), and so does the
 * checkpointer that copies the WAL into the file beside the writer. docs/adr/0011.
 */
export interface SqliteDatabase {
  readonly file: string;
  readonly writer: SqliteWriter;
  readonly readers: SqliteReaders;
  /** Finishes the queued writes, then closes every connection; a second call does nothing. */
  close(): Promise<void>;
}

/**
 * Opens (creating it and its directory when missing) the SQLite file of the embedded mode: starts
 * the writer thread (WAL, synchronous = FULL: a write resolves once fsynced, so a 200 from the
 * API means the items survive a process crash and a power failure alike) and the reader
 * connections. A file that cannot be opened rejects StoreUnavailableError.
 */
export async function openSqliteDatabase(
  file: string,
  options: SqliteDatabaseOptions = {},
): Promise<SqliteDatabase> {
  const busyTimeoutMs = checkBusyTimeout(options.busyTimeoutMs ?? 5000);
  try {
    mkdirSync(path.dirname(path.resolve(file)), { recursive: true, mode: PRIVATE_DIR_MODE });
    ensurePrivateFile(file); // 0600 before SQLite opens it: its -wal and -shm take that mode
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new StoreUnavailableError(`cannot open SQLite database ${file}: ${reason}`, {
      cause: error,
    });
  }
  let checkpointer: SqliteCheckpointer | undefined;
  const writer = await startSqliteWriter(file, {
    busyTimeoutMs,
    group: options.group ?? {},
    onCommit: () => checkpointer?.kick(),
  });
  let readers: SqliteReaders | undefined;
  try {
    readers = await openSqliteReaders(file, { connections: options.readers ?? 4, busyTimeoutMs });
    checkpointer = await startSqliteCheckpointer(file, {
      busyTimeoutMs,
      readers,
      writer,
      maxWalPages: options.maxWalPages,
      ...options.checkpointer,
    });
  } catch (error) {
    await writer.close();
    await readers?.close();
    throw error;
  }
  let closed: Promise<void> | undefined;
  const open = readers;
  return {
    file,
    writer,
    readers: open,
    close: () =>
      (closed ??= (async () => {
        await writer.close();
        await checkpointer?.close();
        await open.close();
      })()),
  };
}

/**
 * The database a store works in: a shared one (close() leaves it open), or its own file, opened
 * on first use and closed by the store's close(), as the Mongo adapters take a client or a url.
 */
export function databaseFor(
  options: { database?: SqliteDatabase; file?: string },
  storeName: string,
): { open(): Promise<SqliteDatabase>; close(): Promise<void> } {
  const { database, file } = options;
  if (database) return { open: () => Promise.resolve(database), close: () => Promise.resolve() };
  if (!file) throw new TypeError(`the ${storeName} needs a file or a database`);
  let opened: Promise<SqliteDatabase> | undefined;
  return {
    open: () =>
      (opened ??= openSqliteDatabase(file).catch((error: unknown) => {
        opened = undefined;
        throw error;
      })),
    close: async () => {
      const own = opened;
      opened = undefined;
      if (own) await (await own.catch(() => undefined))?.close();
    },
  };
}

function checkBusyTimeout(busyTimeoutMs: number): number {
  if (!Number.isInteger(busyTimeoutMs) || busyTimeoutMs < 0) {
    throw new RangeError(`busyTimeoutMs must be a non-negative integer, got ${busyTimeoutMs}`);
  }
  return busyTimeoutMs;
}
