import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { StoreUnavailableError } from '@screenfleet/contracts';
import Database from 'libsql';

// What a synchronous connection needs, kept apart from the database's threads and from the
// MongoDB driver: the SQLite writer thread loads this.

/**
 * A plain synchronous connection with the embedded mode's settings: the writer thread's, and a
 * tool's or a test's. Never on a server's event loop: every call blocks the calling thread.
 * Creates the file and its directory when missing; sets the busy timeout, journal_mode = WAL and
 * synchronous = FULL (a commit is fsynced before it returns: notes/sqlite.md on NORMAL).
 */
export function openSqliteConnection(
  file: string,
  options: { busyTimeoutMs?: number } = {},
): Database.Database {
  const busyTimeoutMs = options.busyTimeoutMs ?? 5000;
  let db: Database.Database;
  try {
    mkdirSync(path.dirname(path.resolve(file)), { recursive: true });
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
    throw error;
  }
  return db;
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
