/**
 * bench:search's embedded ingest figures: the same documents inserted, 100 per transaction, into
 * the SQLite content store (search on: its FTS5 index, the seq key and the folded-name and
 * length columns, all written with the item) and into the table the store had before search
 * existed (search off; its schema and insert copied from commit c2afd16: id primary key, the
 * same three indexes, the document as tagged JSON, in this thread). Both with WAL and
 * synchronous = FULL, in fresh files of the same directory, alternating, BENCH_SEARCH_INGEST_
 * ROUNDS rounds. So the difference is what search adds to a write. The documents go in in time
 * order, as a capture sends them: the store's rows are keyed by time (seq), so inserting them
 * out of order would measure page splits of the item table, not the index.
 *
 * A third variant splits that cost: the store itself, with its search table made a plain table
 * before the store creates its schema (CREATE VIRTUAL TABLE IF NOT EXISTS then keeps it). Each
 * item's words are still computed and written as a row, but FTS5 builds no inverted index: the
 * gap to the store is the FTS5 index alone.
 *
 * Since issue 27 every store call goes to the writer thread and back; a fourth variant does the
 * store's row work in this thread, as the writer does it (rowsInThisThread): beside "off", the
 * index's cost without the hop's.
 *
 * Not measured through POST /add: the launcher has no way to store without the index short of
 * a production switch for it, and the HTTP and bus share of an ingest is bench:embedded's.
 */
import { rmSync } from 'node:fs';
import path from 'node:path';
import type Database from 'libsql';
import {
  createSqliteContentStore,
  openSqliteConnection,
  openSqliteDatabase,
  type ContentDocument,
} from '@screenfleet/storage';
import { statementCache } from '../libs/storage/src/sqlite-connection';
import {
  contentTables,
  ensureContentSchema,
  insertItemRow,
} from '../libs/storage/src/sqlite.content-schema';
import { median } from './stats';

const ROUNDS = Number(process.env.BENCH_SEARCH_INGEST_ROUNDS ?? 3);

// The pre-search table (c2afd16's sqlite.content-store.ts).
const preSearchSchema = `
  CREATE TABLE content_items (
    id TEXT PRIMARY KEY NOT NULL,
    device_name TEXT NOT NULL,
    timestamp_ms INTEGER NOT NULL,
    file_path TEXT,
    document TEXT NOT NULL
  );
  CREATE INDEX "content_items_timestamp_id" ON content_items (timestamp_ms, id);
  CREATE INDEX "content_items_device_timestamp_id" ON content_items (device_name, timestamp_ms, id);
  CREATE INDEX "content_items_file_path" ON content_items (file_path);`;

/** The store's JSON with Dates tagged (libs/storage sqlite-json.ts toJson), the same work. */
function toJson(value: unknown): string {
  return JSON.stringify(value, function (this: Record<string, unknown>, key, encoded: unknown) {
    return this[key] instanceof Date ? { $date: encoded } : encoded;
  });
}

function insertWithoutSearch(db: Database.Database, docs: ContentDocument[]): void {
  const insert = db.prepare(
    `INSERT INTO content_items (id, device_name, timestamp_ms, file_path, document)
     VALUES (?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING`,
  );
  for (let i = 0; i < docs.length; i += 100) {
    db.exec('BEGIN IMMEDIATE');
    for (const doc of docs.slice(i, i + 100)) {
      insert.run(doc._id, doc.device_name, doc.timestamp.getTime(), doc.file_path, toJson(doc));
    }
    db.exec('COMMIT');
  }
}

async function storeInsert(file: string, docs: ContentDocument[]): Promise<void> {
  const database = await openSqliteDatabase(file);
  try {
    const store = createSqliteContentStore({ database });
    await store.ensureIndexes();
    for (let i = 0; i < docs.length; i += 100) await store.insertItems(docs.slice(i, i + 100));
  } finally {
    await database.close();
  }
}

/** Items per second of `insert` into a fresh `file`, which is removed after. */
async function rate(
  file: string,
  docs: ContentDocument[],
  insert: (file: string) => Promise<void>,
): Promise<number> {
  try {
    const started = performance.now();
    await insert(file);
    return docs.length / ((performance.now() - started) / 1000);
  } finally {
    for (const suffix of ['', '-wal', '-shm']) rmSync(`${file}${suffix}`, { force: true });
  }
}

/** A synchronous connection with the store's settings (WAL, FULL), closed after `use`. */
function withConnection(file: string, use: (db: Database.Database) => void): void {
  const db = openSqliteConnection(file);
  try {
    use(db);
  } finally {
    db.close();
  }
}

/**
 * The store's row work (sqlite.content-schema.ts: its row, its search-index row) in this thread,
 * 100 a transaction, as the writer thread does it: beside "off", what search adds to a write,
 * without the hop to the writer thread that every store call now makes.
 */
function rowsInThisThread(db: Database.Database, docs: ContentDocument[]): void {
  const sql = statementCache(db);
  const tables = contentTables('content_items');
  db.exec('BEGIN IMMEDIATE');
  ensureContentSchema(db, sql, tables);
  db.exec('COMMIT');
  for (let i = 0; i < docs.length; i += 100) {
    db.exec('BEGIN IMMEDIATE');
    for (const doc of docs.slice(i, i + 100)) insertItemRow(sql, tables, doc);
    db.exec('COMMIT');
  }
}

const costPercent = (on: number, off: number) => Math.round((1 - on / off) * 1000) / 10;

export async function embeddedIngest(
  dir: string,
  docs: ContentDocument[],
  log: (message: string) => void,
) {
  const on: number[] = [];
  const off: number[] = [];
  const noFts: number[] = [];
  const inThread: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    off.push(
      await rate(path.join(dir, 'ingest-off.db'), docs, (file) => {
        withConnection(file, (db) => {
          db.exec(preSearchSchema);
          insertWithoutSearch(db, docs);
        });
        return Promise.resolve();
      }),
    );
    on.push(await rate(path.join(dir, 'ingest-on.db'), docs, (file) => storeInsert(file, docs)));
    noFts.push(
      await rate(path.join(dir, 'ingest-no-fts.db'), docs, (file) => {
        withConnection(file, (db) =>
          db.exec('CREATE TABLE content_items_search (words, device, type)'),
        );
        return storeInsert(file, docs);
      }),
    );
    inThread.push(
      await rate(path.join(dir, 'ingest-rows.db'), docs, (file) => {
        withConnection(file, (db) => rowsInThisThread(db, docs));
        return Promise.resolve();
      }),
    );
    log(
      `embedded ingest round ${round + 1}: on ${Math.round(on[round]!)} items/s, off ${Math.round(off[round]!)}, store without FTS5 ${Math.round(noFts[round]!)}, store rows in this thread ${Math.round(inThread[round]!)}`,
    );
  }
  const onRate = median(on);
  const offRate = median(off);
  return {
    store: {
      items: docs.length,
      rounds: ROUNDS,
      on_items_per_s: Math.round(onRate),
      off_items_per_s: Math.round(offRate),
      index_cost_percent: costPercent(onRate, offRate),
      store_without_fts5_items_per_s: Math.round(median(noFts)),
      fts5_index_cost_percent: costPercent(onRate, median(noFts)),
      rows_in_thread_items_per_s: Math.round(median(inThread)),
      rows_in_thread_index_cost_percent: costPercent(median(inThread), offRate),
    },
    http_path:
      'not measured: no honest way to switch the index off in the launcher (see bench/search-ingest.ts)',
  };
}
