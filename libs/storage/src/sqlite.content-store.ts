import type {
  ContentDocument,
  ContentStore,
  InsertResult,
  NewContentDocument,
  SearchQuery,
  SearchResult,
  TimeRange,
} from './content-store';
import {
  databaseFor,
  immediateTransaction,
  statementCache,
  type SqliteDatabase,
} from './sqlite-database';
import { fromJson } from './sqlite-json';
import {
  contentTables,
  deleteItemRows,
  ensureContentSchema,
  insertItemRow,
} from './sqlite.content-schema';
import { searchSql } from './sqlite.content-search';
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
 * on, and a row in an FTS5 search index, written and deleted in the same transaction
 * (sqlite.content-schema.ts, sqlite.content-search.ts). The API is synchronous, so each
 * operation runs whole before the next starts in this process; every write is one BEGIN
 * IMMEDIATE transaction, so other connections to the file see all of it or none of it.
 */
export function createSqliteContentStore(options: SqliteContentStoreOptions): ContentStore {
  const { database, owned } = databaseFor(options, 'content store');
  const { db } = database;
  const tables = contentTables(options.table ?? 'content_items');
  const { table } = tables;
  const sql = statementCache(db);

  // Created on first use too, so a store works before ensureIndexes (as a Mongo collection does).
  let schemaReady = false;
  function ensureSchema(): void {
    if (schemaReady) return;
    immediateTransaction(db, () => ensureContentSchema(db, sql, tables));
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

  function insertIgnoringStored(docs: NewContentDocument[]): InsertResult {
    if (docs.length === 0) return { inserted: 0, alreadyStored: 0 };
    const inserted = immediateTransaction(db, () => {
      let count = 0;
      for (const doc of docs) count += insertItemRow(sql, tables, doc);
      return count;
    });
    return { inserted, alreadyStored: docs.length - inserted };
  }

  function search(query: SearchQuery): SearchResult {
    // An empty list of types or devices matches nothing (FTS5 has no empty OR).
    if (query.contentTypes.length === 0 || query.devices?.length === 0) {
      return { items: [], total: 0 };
    }
    const { page, count } = searchSql(tables, query);
    // One read transaction, so the page and the total see the same commit.
    db.exec('BEGIN');
    try {
      const rows = page ? (sql(page.text).all(...page.params) as Array<{ document: string }>) : [];
      const { n } = sql(count.text).get(...count.params) as { n: number };
      return { items: rows.map((row) => fromJson<ContentDocument>(row.document)), total: n };
    } finally {
      db.exec('COMMIT');
    }
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

    deleteByIds: (ids) =>
      translated('deleteByIds', () => {
        if (ids.length === 0) return 0;
        return immediateTransaction(db, () => deleteItemRows(sql, tables, ids));
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

    search: (query) => translated('search', () => search(query)),

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
