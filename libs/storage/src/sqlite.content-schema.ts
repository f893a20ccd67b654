import { isStorableTimestamp, itemText, searchWords, textLength } from '@screenfleet/contracts';
import type Database from 'libsql';
import type { ContentDocument, DeletedItems, NewContentDocument } from './content-store';
import { summariseDeleted } from './deleted-items';
import { tableName } from './sqlite-connection';
import { fromJson, toJson } from './sqlite-json';
import { ContentRejectedError } from './store-error-kinds';

/**
 * An item's `seq` (its rowid, and the rowid of its search-index row) is time-ordered:
 * `timestamp_ms * SLOTS_PER_MS + n`, n counting the items stored with that same millisecond. So
 * rowid order is time order, and the search index alone answers "these words, in this time
 * range, newest first" and counts it, without reading an item row (sqlite.content-search.ts).
 * Once a millisecond's SLOTS_PER_MS places are taken (a bulk import with whole-second
 * timestamps), further items of it get the next place of the overflow range, above every
 * time-ordered seq; search reads that range by the items' real timestamps and merges it in. So
 * no number of items in one millisecond is refused. An INTEGER PRIMARY KEY, so it never changes
 * (VACUUM renumbers implicit rowids).
 */
export const SLOTS_PER_MS = 16384;
/** 2^62: time-ordered seqs lie below (|timestamp_ms| < 2^48, times 2^14), overflow seqs above. */
export const OVERFLOW_SEQ = '4611686018427387904';
/** Each table's layout, so a file written by an older version is rebuilt once when opened. */
export const LAYOUT_VERSION = 2;

/** The item table and its search index, names checked and quoted for SQL text. */
export interface ContentTables {
  name: string;
  table: string;
  search: string;
  /** The keys of items that claim more than their id (NewContentDocument's claims). */
  claims: string;
}

export function contentTables(name: string): ContentTables {
  return {
    name,
    table: tableName(name, 'table'),
    search: tableName(`${name}_search`, 'table'),
    claims: tableName(`${name}_claims`, 'table'),
  };
}

const createClaims = ({ name, claims }: ContentTables) => `
  CREATE TABLE IF NOT EXISTS ${claims} (key TEXT PRIMARY KEY, owner TEXT NOT NULL) WITHOUT ROWID;
  CREATE INDEX IF NOT EXISTS "${name}_claims_owner" ON ${claims} (owner);`;

type Statements = (sql: string) => Database.Statement;

// timestamp_ms: milliseconds since the epoch (UTC), the same precision as BSON dates, so the
// (timestamp, id) order is the Mongo adapter's; id compares as binary UTF-8, as Mongo's does.
// The folded names and text_length are search filters (lower case by JavaScript's rules:
// SQLite's lower() and LIKE fold ASCII only). libsql binds every JavaScript number as a REAL,
// hence the CASTs wherever a number is multiplied.
const createTable = (table: string) => `
  CREATE TABLE IF NOT EXISTS ${table} (
    seq INTEGER PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    device_name TEXT NOT NULL,
    timestamp_ms INTEGER NOT NULL,
    file_path TEXT,
    content_type TEXT NOT NULL,
    app_name_folded TEXT,
    window_name_folded TEXT,
    text_length INTEGER NOT NULL,
    document TEXT NOT NULL,
    CONSTRAINT seq_within_its_millisecond_or_overflow CHECK (
      (seq >= timestamp_ms * ${SLOTS_PER_MS} AND seq < (timestamp_ms + 1) * ${SLOTS_PER_MS})
      OR seq >= ${OVERFLOW_SEQ})
  );`;

// Contentless (the text is in the item's document already), with deletes by rowid. `words`
// holds searchWords(itemText), already folded, so the index and a query agree by construction
// (the tokenizer's own folding then changes nothing); repeats are kept: BM25 counts them.
// `device` and `type` hold one token each (searchIndexTokens), so the device and type filters,
// the commonest after words and time, are answered by the index too, totals included.
const createSearchIndex = (search: string) => `
  CREATE VIRTUAL TABLE IF NOT EXISTS ${search} USING fts5(
    words, device, type,
    content = '', contentless_delete = 1, tokenize = 'unicode61 remove_diacritics 2'
  );`;

const createVersions = `
  CREATE TABLE IF NOT EXISTS schema_versions (name TEXT PRIMARY KEY, version INTEGER NOT NULL);`;

/**
 * The one token of a device in the search index: its name's UTF-8 in hex, so any name (spaces,
 * punctuation, any script) is a single exact token of letters and digits; prefixed, so even an
 * empty name is a token.
 */
export function deviceToken(deviceName: string): string {
  return `d${Buffer.from(deviceName, 'utf8').toString('hex')}`;
}

/** What the search index holds for an item: its words, device and content type. */
function searchIndexRow(doc: ContentDocument, text: string): [string, string, string] {
  return [searchWords(text).join(' '), deviceToken(doc.device_name), doc.content_type];
}

const createIndexes = ({ name, table }: ContentTables) => `
  CREATE INDEX IF NOT EXISTS "${name}_timestamp_id" ON ${table} (timestamp_ms, id);
  CREATE INDEX IF NOT EXISTS "${name}_device_timestamp_id" ON ${table} (device_name, timestamp_ms, id);
  CREATE INDEX IF NOT EXISTS "${name}_file_path" ON ${table} (file_path);`;

/**
 * Creates the tables and indexes, or brings a file written by an older version up to date: a
 * table of an older layout (before search: no seq; before the overflow range: its CHECK refuses
 * overflow seqs) is rebuilt into the current one and every item indexed, once. Runs in the writer
 * thread's transaction, so a crash leaves the old table as it was.
 */
export function ensureContentSchema(
  db: Database.Database,
  sql: Statements,
  tables: ContentTables,
): void {
  db.exec(createVersions);
  const exists = db
    .prepare(`SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = ?`)
    .get(tables.name);
  const stored = db
    .prepare(`SELECT version FROM schema_versions WHERE name = ?`)
    .get(tables.name) as { version: number } | undefined;
  if (exists && stored?.version !== LAYOUT_VERSION) {
    rebuild(db, sql, tables);
  } else {
    const indexed = db
      .prepare(`SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = ?`)
      .get(`${tables.name}_search`);
    db.exec(createSearchIndex(tables.search));
    if (exists && !indexed) indexStoredItems(db, sql, tables);
  }
  db.exec(createTable(tables.table));
  db.exec(createIndexes(tables));
  db.exec(createClaims(tables));
  sql(
    `INSERT INTO schema_versions (name, version) VALUES (?, ${LAYOUT_VERSION})
     ON CONFLICT (name) DO UPDATE SET version = excluded.version`,
  ).run(tables.name);
}

/** The old table's rows, re-inserted as insertItems would insert them now, with a new index. */
function rebuild(db: Database.Database, sql: Statements, tables: ContentTables): void {
  const next = contentTables(`${tables.name}_rebuilt`);
  db.exec(`DROP TABLE IF EXISTS ${next.table}`);
  db.exec(`DROP TABLE IF EXISTS ${tables.search}`);
  db.exec(createTable(next.table));
  db.exec(createSearchIndex(tables.search));
  const target = { ...next, search: tables.search, claims: tables.claims };
  // The old rowid: an implicit one before search, seq after (kept as an integer: BigInt).
  const read = db
    .prepare(
      `SELECT rowid AS position, document FROM ${tables.table} WHERE rowid > ? ORDER BY rowid LIMIT 1000`,
    )
    .safeIntegers(true);
  let after: bigint = -(2n ** 63n);
  for (;;) {
    const rows = read.all(after) as Array<{ position: bigint; document: string }>;
    if (rows.length === 0) break;
    const indexed: SearchIndexRow[] = [];
    for (const { document } of rows) {
      const row = contentRow(fromJson<ContentDocument>(document));
      const seq = insertContentRow(sql, target, row);
      if (seq !== undefined) indexed.push({ seq, words: row.search });
    }
    insertSearchRows(sql, target.search, indexed);
    after = rows[rows.length - 1]!.position;
  }
  db.exec(`DROP TABLE ${tables.table}`);
  db.exec(`ALTER TABLE ${next.table} RENAME TO ${tables.name}`);
}

/**
 * Fills a missing search index (dropped by hand) from the items: keyed by id, since a seq does
 * not pass through a JavaScript number intact (it exceeds 2^53).
 */
function indexStoredItems(db: Database.Database, sql: Statements, tables: ContentTables): void {
  const first = db.prepare(`SELECT id, document FROM ${tables.table} ORDER BY id LIMIT 1000`);
  const next = db.prepare(
    `SELECT id, document FROM ${tables.table} WHERE id > ? ORDER BY id LIMIT 1000`,
  );
  const index = sql(
    `INSERT INTO ${tables.search} (rowid, words, device, type)
     VALUES ((SELECT seq FROM ${tables.table} WHERE id = ?), ?, ?, ?)`,
  );
  let after: string | undefined;
  for (;;) {
    const rows = (after === undefined ? first.all() : next.all(after)) as Array<{
      id: string;
      document: string;
    }>;
    if (rows.length === 0) break;
    for (const row of rows) {
      const doc = fromJson<ContentDocument>(row.document);
      index.run(row.id, ...searchIndexRow(doc, itemText(doc)));
    }
    after = rows[rows.length - 1]!.id;
  }
}

/** An item as its row and its search-index row hold it: the work done before SQL. */
export interface ContentRow {
  id: string;
  /** Ids it claims besides its own (NewContentDocument's claims). */
  claims: readonly string[];
  deviceName: string;
  timestampMs: number;
  filePath: string | null;
  contentType: string;
  appNameFolded: string | null;
  windowNameFolded: string | null;
  textLength: number;
  document: string;
  search: [words: string, device: string, type: string];
}

/** Refuses (ContentRejectedError) an item whose timestamp the time-ordered key cannot hold. */
export function contentRow({ claims, batch: _batch, ...doc }: NewContentDocument): ContentRow {
  if (!isStorableTimestamp(doc.timestamp)) {
    throw new ContentRejectedError(
      `content store refused item ${doc._id}: its timestamp ${String(doc.timestamp)} is outside what it can order`,
    );
  }
  const text = itemText(doc);
  return {
    id: doc._id,
    claims: claims ?? [],
    deviceName: doc.device_name,
    timestampMs: doc.timestamp.getTime(),
    filePath: doc.file_path,
    contentType: doc.content_type,
    appNameFolded: doc.app_name?.toLowerCase() ?? null,
    windowNameFolded: doc.window_name?.toLowerCase() ?? null,
    textLength: textLength(text),
    document: toJson(doc),
    search: searchIndexRow(doc, text),
  };
}

/** Inserts one item and its search-index row, in the caller's transaction. */
export function insertItemRow(
  sql: Statements,
  tables: ContentTables,
  doc: NewContentDocument,
): number {
  const row = contentRow(doc);
  const seq = insertContentRow(sql, tables, row);
  if (seq === undefined) return 0;
  insertSearchRows(sql, tables.search, [{ seq, words: row.search }]);
  return 1;
}

/** An item's search-index row, to be written once its transaction's savepoints are done. */
export interface SearchIndexRow {
  seq: bigint;
  words: ContentRow['search'];
}

/**
 * Inserts an item's row, in the caller's transaction, and returns its seq (a BigInt: seqs pass
 * 2^53), or undefined when its id, or one it claims, was stored before (nothing written then).
 * Its search-index row is the caller's to write (insertSearchRows): FTS5 writes what it holds
 * pending as a new segment at every savepoint, so the writer indexes a whole group's items at
 * its transaction's top level, after its batches' savepoints.
 */
export function insertContentRow(
  sql: Statements,
  tables: ContentTables,
  row: ContentRow,
): bigint | undefined {
  if (row.claims.length > 0 && !claimAll(sql, tables, row.id, row.claims)) return undefined;
  // seq: the next free place in the item's millisecond, else the next overflow place.
  const inserted = sql(
    `INSERT INTO ${tables.table} (seq, id, device_name, timestamp_ms, file_path, content_type,
       app_name_folded, window_name_folded, text_length, document)
     VALUES (
       (SELECT CASE
          WHEN last IS NULL THEN first
          WHEN last + 1 < first + ${SLOTS_PER_MS} THEN last + 1
          ELSE coalesce(
            (SELECT max(seq) + 1 FROM ${tables.table} WHERE seq >= ${OVERFLOW_SEQ}),
            ${OVERFLOW_SEQ})
        END
        FROM (SELECT CAST(?1 AS INTEGER) * ${SLOTS_PER_MS} AS first),
             (SELECT max(seq) AS last FROM ${tables.table}
              WHERE seq >= CAST(?1 AS INTEGER) * ${SLOTS_PER_MS}
                AND seq < (CAST(?1 AS INTEGER) + 1) * ${SLOTS_PER_MS})),
       ?2, ?3, ?1, ?4, ?5, ?6, ?7, ?8, ?9)
     ON CONFLICT (id) DO NOTHING
     RETURNING seq`,
  )
    .safeIntegers(true)
    .get(
      row.timestampMs,
      row.id,
      row.deviceName,
      row.filePath,
      row.contentType,
      row.appNameFolded,
      row.windowNameFolded,
      row.textLength,
      row.document,
    ) as { seq: bigint } | undefined;
  return inserted?.seq;
}

/**
 * Writes search-index rows in seq order, in the caller's transaction. FTS5 also starts a new
 * segment whenever a rowid is not above the one before it, so rows out of order (batches of
 * several devices in one group) would each cost a segment: sorted, a commit writes one.
 */
export function insertSearchRows(sql: Statements, search: string, rows: SearchIndexRow[]): void {
  const insert = sql(`INSERT INTO ${search} (rowid, words, device, type) VALUES (?, ?, ?, ?)`);
  rows.sort((a, b) => (a.seq < b.seq ? -1 : a.seq > b.seq ? 1 : 0));
  for (const { seq, words } of rows) insert.run(seq, ...words);
}

/**
 * Claims the item's id and its claims (in the caller's transaction, so none of it stays when
 * the item is not stored): false when one of them is another item's, or the id of another
 * stored item. One row a statement: a statement that may write several rows opens a statement
 * savepoint, and FTS5 writes its pending words out as a new segment at every savepoint (the
 * json_each form of these statements made the claims cost about twice as much in a batch).
 */
function claimAll(
  sql: Statements,
  tables: ContentTables,
  id: string,
  claims: readonly string[],
): boolean {
  const keys = [id, ...claims];
  const claimedByAnother = sql(`SELECT 1 FROM ${tables.claims} WHERE key = ? AND owner <> ?`);
  const anotherItemsId = sql(`SELECT 1 FROM ${tables.table} WHERE id = ? AND id <> ?`);
  if (keys.some((key) => claimedByAnother.get(key, id) || anotherItemsId.get(key, id))) {
    return false;
  }
  const claim = sql(
    `INSERT INTO ${tables.claims} (key, owner) VALUES (?, ?) ON CONFLICT (key) DO NOTHING`,
  );
  for (const key of keys) claim.run(key, id);
  return true;
}

/** Deletes the items, their search-index rows and their claims, in the caller's transaction. */
export function deleteItemRows(sql: Statements, tables: ContentTables, ids: string[]): number {
  // The ids travel as one JSON array (json_each) rather than one variable each: no limit on
  // how many (SQLite allows 32766 variables), and one statement text to prepare.
  const json = JSON.stringify(ids);
  sql(`DELETE FROM ${tables.claims} WHERE owner IN (SELECT value FROM json_each(?))`).run(json);
  sql(
    `DELETE FROM ${tables.search} WHERE rowid IN
       (SELECT seq FROM ${tables.table} WHERE id IN (SELECT value FROM json_each(?)))`,
  ).run(json);
  return sql(`DELETE FROM ${tables.table} WHERE id IN (SELECT value FROM json_each(?))`).run(json)
    .changes;
}

/** What deleteRangeRows selects: a delete's range (libs/storage DeleteRange), in milliseconds. */
export interface DeleteRangeMs {
  fromMs?: number;
  toMs?: number;
  device?: string;
}

/**
 * Deletes the oldest `limit` items of the range (with their search rows and claims) and says
 * what went, by device and type, and which files they named. Runs inside the writer's
 * transaction; `beforeDelete` sees the chosen ids while their rows still exist (the per-device
 * counters' decrement reads them), so it commits with the delete.
 */
export function deleteRangeRows(
  sql: Statements,
  tables: ContentTables,
  range: DeleteRangeMs,
  limit: number,
  beforeDelete: (ids: string[]) => void = () => undefined,
): DeletedItems {
  const clauses: string[] = [];
  const params: Array<string | number> = [];
  if (range.fromMs !== undefined) {
    clauses.push('timestamp_ms >= ?');
    params.push(range.fromMs);
  }
  if (range.toMs !== undefined) {
    clauses.push('timestamp_ms < ?');
    params.push(range.toMs);
  }
  if (range.device !== undefined) {
    clauses.push('device_name = ?');
    params.push(range.device);
  }
  const where = clauses.length > 0 ? clauses.join(' AND ') : '1';
  const rows = sql(
    `SELECT id, device_name, content_type, file_path FROM ${tables.table} WHERE ${where}
     ORDER BY timestamp_ms, id LIMIT ?`,
  ).all(...params, limit) as Array<{
    id: string;
    device_name: string;
    content_type: ContentDocument['content_type'];
    file_path: string | null;
  }>;
  if (rows.length === 0) return { counts: [], filePaths: [] };
  const ids = rows.map((row) => row.id);
  beforeDelete(ids);
  deleteItemRows(sql, tables, ids);
  return summariseDeleted(rows);
}
