import { TimeoutError } from '@screenfleet/contracts';
import type {
  ContentDocument,
  ContentStore,
  InsertOptions,
  InsertResult,
  NewContentDocument,
  SearchOptions,
  SearchQuery,
  SearchResult,
  TimeRange,
} from './content-store';
import { databaseFor, type SqliteDatabase } from './sqlite-database';
import { sqliteStoreAccess } from './sqlite-store-access';
import { fromJson } from './sqlite-json';
import { contentTables } from './sqlite.content-schema';
import { ranksEveryMatch, searchSql } from './sqlite.content-search';
import {
  readDeviceCounters,
  readDeviceListing,
  readNewestItemTimes,
} from './sqlite.device-counters';
import { counterTables } from './sqlite.device-counters-schema';

export interface SqliteContentStoreOptions {
  /** A database shared with other stores (openSqliteDatabase); close() leaves it open. */
  database?: SqliteDatabase;
  /** Or a file this store opens on first use and closes on close(). */
  file?: string;
  table?: string;
}

/**
 * ContentStore in one SQLite table, for the embedded mode. Each item is a row: its document as
 * JSON (Dates tagged, so they come back as Dates) beside the columns the queries filter and sort
 * on, and a row in an FTS5 search index, written and deleted in the same transaction
 * (sqlite.content-schema.ts, sqlite.content-search.ts). Writes go to the database's writer
 * thread (a resolved insert is committed and fsynced); reads to its reader connections, each
 * one statement that answers in one row, so no SQL runs on the caller's thread.
 */
export function createSqliteContentStore(options: SqliteContentStoreOptions): ContentStore {
  const source = databaseFor(options, 'content store');
  const tables = contentTables(options.table ?? 'content_items');
  const { table, name } = tables;
  const counters = counterTables(name);

  // Created on first use too, so a store works before ensureIndexes (as a Mongo collection does).
  const access = sqliteStoreAccess(
    source,
    { write: 'content.schema', args: { table: name } },
    'content store',
  );
  const translated = access.run;

  async function insertIgnoringStored(
    { writer }: SqliteDatabase,
    docs: NewContentDocument[],
    { restored }: InsertOptions,
  ): Promise<InsertResult> {
    if (docs.length === 0) return { inserted: 0, alreadyStored: 0 };
    const inserted = await writer.write(
      'content.insert',
      { table: name, docs, ...(restored ? { restored } : {}) },
      docs.length,
    );
    return { inserted, alreadyStored: docs.length - inserted };
  }

  async function search(
    { readers }: SqliteDatabase,
    query: SearchQuery,
    options: SearchOptions,
  ): Promise<SearchResult> {
    // An empty list of types or devices matches nothing (FTS5 has no empty OR).
    if (query.contentTypes.length === 0 || query.devices?.length === 0) {
      return { items: [], total: 0 };
    }
    const { text, params } = searchSql(tables, query, options.maxBytes);
    const deadline =
      options.timeoutMs === undefined ? undefined : performance.now() + options.timeoutMs;
    try {
      // A relevance search scores every match: one at a time (ReadOptions.alone).
      const [row] = await readers.query<{ total: number; page: string }>(text, params, {
        deadline,
        alone: ranksEveryMatch(query),
      });
      return { items: fromJson<ContentDocument[]>(row!.page), total: row!.total };
    } catch (error) {
      if (!(error instanceof TimeoutError)) throw error;
      throw new TimeoutError(
        `the search ran past its deadline (${options.timeoutMs} ms) and was stopped`,
      );
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
      const docs = await translated('scanRange', async ({ readers }) => {
        const [row] = await readers.query<{ docs: string }>(
          `SELECT '[' || coalesce(group_concat(document, ',' ORDER BY timestamp_ms, id), '') || ']'
             AS docs
           FROM (SELECT timestamp_ms, id, document FROM ${table} WHERE ${where}
                 ORDER BY timestamp_ms, id LIMIT ?)`,
          [...params, chunkSize],
        );
        return fromJson<ContentDocument[]>(row!.docs);
      });
      if (docs.length === 0) return;
      yield docs;
      if (docs.length < chunkSize) return;
      const last = docs[docs.length - 1]!;
      after = [last.timestamp.getTime(), last._id];
    }
  }

  return {
    ensureIndexes: () => {
      access.createAgain(); // cheap, and it recreates a dropped index
      return translated('ensureIndexes', () => Promise.resolve());
    },

    insertItems: (docs, options = {}) =>
      translated('insertItems', (database) => insertIgnoringStored(database, docs, options)),

    scanRange: (range, { chunkSize }) => scanChunks(range, chunkSize),

    countRange: (range) =>
      translated('countRange', async ({ readers }) => {
        const { where, params } = rangeWhere(range);
        const [row] = await readers.query<{ n: number }>(
          `SELECT count(*) AS n FROM ${table} WHERE ${where}`,
          params,
        );
        return row!.n;
      }),

    deleteByIds: (ids, options = {}) =>
      translated('deleteByIds', async ({ writer }) => {
        if (ids.length === 0) return 0;
        const archived = options.archived === true;
        return writer.write('content.delete', { table: name, ids, archived }, ids.length);
      }),

    deleteRange: (range, { limit }) =>
      translated('deleteRange', async ({ writer }) => {
        positiveLimit(limit);
        return writer.write(
          'content.deleteRange',
          {
            table: name,
            range: {
              ...(range.from ? { fromMs: range.from.getTime() } : {}),
              ...(range.to ? { toMs: range.to.getTime() } : {}),
              ...(range.device !== undefined ? { device: range.device } : {}),
            },
            limit,
          },
          limit,
        );
      }),
    deviceCounters: (query) =>
      translated('deviceCounters', ({ readers }) => readDeviceCounters(readers, counters, query)),
    deviceListing: (devices) =>
      translated('deviceListing', ({ readers }) => readDeviceListing(readers, counters, devices)),
    newestItemTimes: (devices, { timeoutMs } = {}) =>
      translated('newestItemTimes', ({ readers }) =>
        readNewestItemTimes(readers, counters, devices, {
          ...(timeoutMs === undefined ? {} : { deadline: performance.now() + timeoutMs }),
        }),
      ),

    forgetDevice: (device) =>
      translated('forgetDevice', ({ writer }) =>
        writer.write('content.forgetDevice', { table: name, device }),
      ),

    filePathsInUse: (paths) =>
      translated('filePathsInUse', async ({ readers }) => {
        if (paths.length === 0) return new Set<string>();
        const [row] = await readers.query<{ paths: string }>(
          `SELECT json_group_array(file_path) AS paths FROM (
             SELECT DISTINCT file_path FROM ${table}
             WHERE file_path IN (SELECT value FROM json_each(?)))`,
          [JSON.stringify(paths)],
        );
        return new Set(JSON.parse(row!.paths) as string[]);
      }),

    search: (query, options = {}) =>
      translated('search', (database) => search(database, query, options)),

    close: () => source.close(),
  };
}

function positiveLimit(limit: number): void {
  if (!Number.isInteger(limit) || limit < 1) {
    throw new RangeError(`limit must be a positive integer, got ${limit}`);
  }
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
