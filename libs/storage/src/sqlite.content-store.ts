import type { ContentDocument, ContentStore, InsertResult, TimeRange } from './content-store';
import {
  databaseFor,
  immediateTransaction,
  statementCache,
  tableName,
  type SqliteDatabase,
} from './sqlite-database';
import { fromJson, toJson } from './sqlite-json';
import { toStoreError } from './store-errors';

export interface SqliteContentStoreOptions {
  /** A database shared with other stores (see openSqliteDatabase); close() leaves it open. */
  database?: SqliteDatabase;
  /** Or a file this store opens itself and closes on close(). */
  file?: string;
  table?: string;
}

/**
 * ContentStore in one SQLite table, for the embedded mode. Each item is a row: its document as
 * JSON (Dates tagged, so they come back as Dates) beside the columns the queries filter and sort
 * on. The API is synchronous, so each operation runs whole before the next starts in this
 * process; every write is one BEGIN IMMEDIATE transaction, so other connections to the file
 * see all of it or none of it.
 */
export function createSqliteContentStore(options: SqliteContentStoreOptions): ContentStore {
  const { database, owned } = databaseFor(options, 'content store');
  const { db } = database;
  const name = options.table ?? 'content_items';
  const table = tableName(name, 'table');
  const sql = statementCache(db);

  // timestamp_ms: milliseconds since the epoch (UTC), the same precision as BSON dates, so the
  // (timestamp, id) order is the Mongo adapter's; id compares as binary UTF-8, as Mongo's does.
  const schema = `
    CREATE TABLE IF NOT EXISTS ${table} (
      id TEXT PRIMARY KEY NOT NULL,
      device_name TEXT NOT NULL,
      timestamp_ms INTEGER NOT NULL,
      file_path TEXT,
      document TEXT NOT NULL
    );
    CREATE INDEX IF NOT EXISTS "${name}_timestamp_id" ON ${table} (timestamp_ms, id);
    CREATE INDEX IF NOT EXISTS "${name}_device_timestamp_id" ON ${table} (device_name, timestamp_ms, id);
    CREATE INDEX IF NOT EXISTS "${name}_file_path" ON ${table} (file_path);`;

  // Created on first use too, so a store works before ensureIndexes (as a Mongo collection does).
  let schemaReady = false;
  function ensureSchema(): void {
    if (schemaReady) return;
    immediateTransaction(db, () => db.exec(schema));
    schemaReady = true;
  }

  /** Runs `run` now (the API is synchronous), settling with its result or the port's error. */
  function translated<T>(operation: string, run: () => T): Promise<T> {
    return new Promise<T>((resolve) => {
      ensureSchema();
      resolve(run());
    }).catch((error: unknown) => {
      throw toStoreError(error, operation);
    });
  }

  function insertIgnoringStored(docs: ContentDocument[]): InsertResult {
    if (docs.length === 0) return { inserted: 0, alreadyStored: 0 };
    // ON CONFLICT(id) DO NOTHING rather than INSERT OR IGNORE: only a stored id is "already
    // stored"; OR IGNORE would also skip a row breaking NOT NULL and count it as stored.
    const insert = sql(
      `INSERT INTO ${table} (id, device_name, timestamp_ms, file_path, document)
       VALUES (?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING`,
    );
    const inserted = immediateTransaction(db, () => {
      let count = 0;
      for (const doc of docs) {
        const { changes } = insert.run(
          doc._id,
          doc.device_name,
          doc.timestamp.getTime(),
          doc.file_path,
          toJson(doc),
        );
        count += changes;
      }
      return count;
    });
    return { inserted, alreadyStored: docs.length - inserted };
  }

  async function* scanChunks(
    range: TimeRange,
    chunkSize: number,
  ): AsyncGenerator<ContentDocument[]> {
    if (!Number.isInteger(chunkSize) || chunkSize < 1) {
      throw new RangeError(`chunkSize must be a positive integer, got ${chunkSize}`);
    }
    const base = rangeWhere(range);
    let after: [number, string] | undefined;
    for (;;) {
      // Keyset pagination on (timestamp, id), as in the Mongo adapter: each chunk is a fresh
      // query starting strictly after the last row returned, so equal timestamps across chunk
      // borders come exactly once and deleting the rows read does not shift the next chunk. The
      // row-value comparison is served by the (timestamp_ms, id) indexes.
      const where = after ? `${base.where} AND (timestamp_ms, id) > (?, ?)` : base.where;
      const params = after ? [...base.params, ...after] : base.params;
      const rows = await translated(
        'scanRange',
        () =>
          sql(
            `SELECT timestamp_ms, id, document FROM ${table} WHERE ${where}
             ORDER BY timestamp_ms, id LIMIT ?`,
          ).all(...params, chunkSize) as ScanRow[],
      );
      if (rows.length === 0) return;
      yield rows.map((row) => fromJson<ContentDocument>(row.document));
      if (rows.length < chunkSize) return;
      const last = rows[rows.length - 1]!;
      after = [last.timestamp_ms, last.id];
    }
  }

  return {
    ensureIndexes: () => {
      schemaReady = false; // run the DDL again: cheap, and it recreates a dropped index
      return translated('ensureIndexes', () => undefined);
    },

    insertItems: (docs) => translated('insertItems', () => insertIgnoringStored(docs)),

    scanRange: (range, { chunkSize }) => scanChunks(range, chunkSize),

    countRange: (range) =>
      translated('countRange', () => {
        const { where, params } = rangeWhere(range);
        const row = sql(`SELECT count(*) AS n FROM ${table} WHERE ${where}`).get(...params);
        return (row as { n: number }).n;
      }),

    // The ids travel as one JSON array (json_each) rather than one variable each: no limit on
    // how many (SQLite allows 32766 variables), and one statement text to prepare.
    deleteByIds: (ids) =>
      translated('deleteByIds', () => {
        if (ids.length === 0) return 0;
        const remove = sql(`DELETE FROM ${table} WHERE id IN (SELECT value FROM json_each(?))`);
        return immediateTransaction(db, () => remove.run(JSON.stringify(ids)).changes);
      }),

    filePathsInUse: (paths) =>
      translated('filePathsInUse', () => {
        if (paths.length === 0) return new Set<string>();
        const rows = sql(
          `SELECT DISTINCT file_path FROM ${table}
           WHERE file_path IN (SELECT value FROM json_each(?))`,
        ).all(JSON.stringify(paths)) as Array<{ file_path: string }>;
        return new Set(rows.map((row) => row.file_path));
      }),

    close: () => {
      if (owned) database.close();
      return Promise.resolve();
    },
  };
}

interface ScanRow {
  timestamp_ms: number;
  id: string;
  document: string;
}

/** [from, to), optionally one device's: served by one of the two (…, timestamp_ms, id) indexes. */
function rangeWhere(range: TimeRange): { where: string; params: Array<string | number> } {
  const clauses = ['timestamp_ms < ?'];
  const params: Array<string | number> = [range.to.getTime()];
  if (range.from) {
    clauses.push('timestamp_ms >= ?');
    params.push(range.from.getTime());
  }
  if (range.device !== undefined) {
    clauses.push('device_name = ?');
    params.push(range.device);
  }
  return { where: clauses.join(' AND '), params };
}
