import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { StoreUnavailableError } from '@screenfleet/contracts';
import { ensurePrivateFile, PRIVATE_DIR_MODE } from '@screenfleet/runtime';
import Database from 'libsql';
import { toStoreError } from './store-errors';

export interface SqliteDatabaseOptions {
  /**
   * How long a statement waits for another connection's write lock before it fails with
   * SQLITE_BUSY (StoreUnavailableError). The API is synchronous, so this is also the longest the
   * event loop can stall on a busy file.
   */
  busyTimeoutMs?: number;
}

/** One open SQLite file, shared by the stores that live in it (content and archive state). */
export interface SqliteDatabase {
  readonly file: string;
  /** The libsql connection (better-sqlite3's API): for the sqlite adapters only. */
  readonly db: Database.Database;
  /** Closes the connection; a second call does nothing. */
  close(): void;
}

/**
 * Opens (creating it and its directory when missing) the SQLite file of the embedded mode, in
 * WAL mode with synchronous = FULL: a commit is fsynced before it returns, so a 200 from the API
 * means the items survive a process crash and a power failure alike (NORMAL would survive only
 * the first, for ~15% more inserts per second: notes/sqlite.md). WAL lets readers go on while
 * one connection writes.
 */
export function openSqliteDatabase(
  file: string,
  options: SqliteDatabaseOptions = {},
): SqliteDatabase {
  const busyTimeoutMs = options.busyTimeoutMs ?? 5000;
  if (!Number.isInteger(busyTimeoutMs) || busyTimeoutMs < 0) {
    throw new RangeError(`busyTimeoutMs must be a non-negative integer, got ${busyTimeoutMs}`);
  }
  let db: Database.Database;
  try {
    mkdirSync(path.dirname(path.resolve(file)), { recursive: true, mode: PRIVATE_DIR_MODE });
    ensurePrivateFile(file); // 0600 before SQLite opens it: its -wal and -shm take that mode
    db = new Database(file);
  } catch (error) {
    // libsql reports a file it cannot open as a plain Error ("ConnectionFailed(...: 14)").
    const reason = error instanceof Error ? error.message : String(error);
    throw new StoreUnavailableError(`cannot open SQLite database ${file}: ${reason}`, {
      cause: error,
    });
  }
  try {
    // The busy timeout first, so switching to WAL waits for a connection that holds the file.
    db.pragma(`busy_timeout = ${busyTimeoutMs}`);
    const [mode] = db.pragma('journal_mode = WAL') as Array<{ journal_mode?: unknown }>;
    if (mode?.journal_mode !== 'wal') {
      throw new Error(
        `SQLite database ${file} cannot use WAL (journal mode ${String(mode?.journal_mode)}): ` +
          'the embedded mode needs a file on a local disk',
      );
    }
    db.pragma('synchronous = FULL'); // per connection, so every handle sets it
  } catch (error) {
    db.close();
    throw toStoreError(error, 'open', `SQLite database ${file}`);
  }

  let open = true;
  return {
    file,
    db,
    close: () => {
      if (!open) return;
      open = false;
      db.close();
    },
  };
}

/** The database a store works in, and whether the store opened it (and so closes it). */
export function databaseFor(
  options: { database?: SqliteDatabase; file?: string },
  storeName: string,
): { database: SqliteDatabase; owned: boolean } {
  if (options.database) return { database: options.database, owned: false };
  if (!options.file) throw new TypeError(`the ${storeName} needs a file or a database`);
  return { database: openSqliteDatabase(options.file), owned: true };
}

/**
 * Runs `write` in a BEGIN IMMEDIATE transaction: the write lock is taken at the start (waiting up
 * to the busy timeout), so a read-decide-write inside cannot be overtaken by another connection,
 * and the whole of it commits or none of it does. Every write of the sqlite adapters goes
 * through here, never as loose autocommit statements.
 */
export function immediateTransaction<T>(db: Database.Database, write: () => T): T {
  db.exec('BEGIN IMMEDIATE');
  try {
    const result = write();
    db.exec('COMMIT');
    return result;
  } catch (error) {
    // SQLite may have rolled back by itself (a full disk, an I/O error): then there is nothing
    // to roll back, and the original error is the one worth reporting.
    if (db.inTransaction) {
      try {
        db.exec('ROLLBACK');
      } catch {
        // keep the original error
      }
    }
    throw error;
  }
}

/** Prepares each SQL text once per connection; the adapters' statements are few and fixed. */
export function statementCache(db: Database.Database): (sql: string) => Database.Statement {
  const statements = new Map<string, Database.Statement>();
  return (sql) => {
    let statement = statements.get(sql);
    if (!statement) {
      statement = db.prepare(sql);
      statements.set(sql, statement);
    }
    return statement;
  };
}

/** A table name from options, checked, since it goes into SQL text; returned quoted. */
export function tableName(name: string, option: string): string {
  if (!/^[A-Za-z_][A-Za-z0-9_]{0,62}$/.test(name)) {
    throw new TypeError(
      `${option} must be letters, digits and _ (not starting with a digit), got "${name}"`,
    );
  }
  return `"${name}"`;
}
