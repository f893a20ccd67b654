import {
  databaseFor,
  immediateTransaction,
  statementCache,
  tableName,
  type SqliteDatabase,
} from './sqlite-database';
import { toStoreError } from './store-errors';

export interface SqliteDeadLettersOptions {
  /** A database shared with other stores; close() leaves it open. */
  database?: SqliteDatabase;
  file?: string;
  table?: string;
}

export interface DeadLetter {
  queue: string;
  reason: string;
  /** The message as it was published (an Envelope), parsed back from its JSON. */
  message: unknown;
  at: Date;
}

/**
 * Where the embedded mode's in-process bus puts a message no handler could take (poison, or
 * past its delivery limit): a table in the same SQLite file, so a dead letter is as durable as
 * the items, and the publisher's confirm (which waits for it) still means "kept". The distributed
 * mode's equivalent is the ingest.content.dead queue.
 */
export function createSqliteDeadLetters(options: SqliteDeadLettersOptions) {
  const { database, owned } = databaseFor(options, 'dead-letter table');
  const { db } = database;
  const table = tableName(options.table ?? 'dead_letters', 'table');
  const sql = statementCache(db);
  db.exec(`CREATE TABLE IF NOT EXISTS ${table} (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    queue TEXT NOT NULL,
    reason TEXT NOT NULL,
    message TEXT NOT NULL,
    at_ms INTEGER NOT NULL
  )`);

  /** Runs `run` now (the API is synchronous), settling with its result or the port's error. */
  function attempt<T>(operation: string, run: () => T): Promise<T> {
    return new Promise<T>((resolve) => resolve(run())).catch((error: unknown) => {
      throw toStoreError(error, operation, 'dead-letter table');
    });
  }

  return {
    add: (queue: string, message: unknown, reason: string): Promise<void> =>
      attempt('add', () => {
        immediateTransaction(db, () =>
          sql(`INSERT INTO ${table} (queue, reason, message, at_ms) VALUES (?, ?, ?, ?)`).run(
            queue,
            reason,
            JSON.stringify(message),
            Date.now(),
          ),
        );
      }),
    /** Oldest first. */
    list: (limit = 100): Promise<DeadLetter[]> =>
      attempt('list', () =>
        (
          sql(`SELECT queue, reason, message, at_ms FROM ${table} ORDER BY seq LIMIT ?`).all(
            limit,
          ) as Array<{ queue: string; reason: string; message: string; at_ms: number }>
        ).map((row) => ({
          queue: row.queue,
          reason: row.reason,
          message: JSON.parse(row.message) as unknown,
          at: new Date(row.at_ms),
        })),
      ),
    close(): Promise<void> {
      if (owned) database.close();
      return Promise.resolve();
    },
  };
}

export type SqliteDeadLetters = ReturnType<typeof createSqliteDeadLetters>;
