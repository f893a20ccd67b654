import { mkdtempSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import {
  createSqliteContentStore,
  openSqliteConnection,
  openSqliteDatabase,
  type ContentStore,
  type NewContentDocument,
  type SearchQuery,
  type SqliteDatabase,
  type SqliteReaders,
} from '@screenfleet/storage';
import type Database from 'libsql';
import { statementCache } from '../src/sqlite-connection';
import {
  writeOperations,
  writePendingSearchRows,
  type WriterConnection,
} from '../src/sqlite-writer.operations';
import { audio, frame, query } from './content-search.contract';
import { t } from './content-store.contract';

// Which indexes the item table's statements use, read from EXPLAIN QUERY PLAN: a secondary index
// no plan uses only costs writes. The statements are the production ones, caught as the store
// runs them (its reads, through a recording reader pool; its writes, the writer thread's
// operations run on a connection of the test's own and rolled back), never restated here. No
// ANALYZE: the store never runs it, so the planner works from its built-in estimates, as on a
// user's file.

/** A statement as the store ran it: its SQL text and the parameters of its first run. */
interface Ran {
  sql: string;
  params: unknown[];
}

/** The plan lines that name the item table (alias `item` in search) read whole. */
const isItemTableScan = (line: string) => /^SCAN (item|content_items)\b/.test(line);

const table = 'content_items';
const day = { fromMs: t(5).getTime(), toMs: t(50).getTime() };

/** One store operation: the plan lines it must show, and the whole-table reads it may do. */
interface Case {
  name: string;
  run: (store: ContentStore, file: string) => Promise<Ran[]>;
  uses: string[];
  /** Whole passes over the item table (or one of its indexes) this operation does, and why. */
  scans?: string[];
}

const rowid = (range: string) => `SEARCH item USING INTEGER PRIMARY KEY (rowid${range})`;
const ftsScan = (arm: string) => `SCAN content_items_search VIRTUAL TABLE INDEX ${arm}`;
const ftsTimed = ftsScan('0:M3<');
const ftsTimedPage = ftsScan('192:M3<'); // 192: the index yields rowid DESC, newest first
const ftsOverflow = ftsScan('0:M3>');
const pageRows = rowid('=?');
// The total of a search without words nor bounds counts every item (any index will do: SQLite
// takes the smallest).
const countAll = 'SCAN item USING COVERING INDEX content_items_file_path';
// The overflow arm without words reads the overflow seqs alone (NOT INDEXED: its order would
// otherwise have SQLite walk a whole timestamp index for the few rows there are).
const overflowArm = rowid('>?');

function search(overrides: Partial<SearchQuery>) {
  return (store: ContentStore) => reading(() => store.search(query(overrides)));
}

const cases: Case[] = [
  // searchSql with words: the search index leads, item rows only by rowid.
  {
    name: 'search: words, newest',
    run: search({ terms: ['alpha'] }),
    uses: [ftsTimed, ftsTimedPage, ftsOverflow, pageRows],
  },
  {
    name: 'search: words, relevance',
    run: search({ terms: ['alpha'], order: 'relevance' }),
    uses: [ftsTimed, ftsOverflow, pageRows],
  },
  {
    name: 'search: words, app name',
    run: search({ terms: ['alpha'], appName: 'term' }),
    uses: [ftsTimed, ftsTimedPage, ftsOverflow, pageRows],
  },
  {
    name: 'search: words, relevance, window name and length',
    run: search({
      terms: ['alpha'],
      order: 'relevance',
      windowName: 'ba',
      minLength: 1,
      maxLength: 100,
    }),
    uses: [ftsTimed, ftsOverflow, pageRows],
  },
  {
    name: 'search: words, device, type, time bounds',
    run: search({
      terms: ['alpha'],
      devices: ['device-1'],
      contentTypes: ['frames'],
      from: t(10),
      to: t(500),
    }),
    uses: [ftsScan('0:M3><'), ftsScan('192:M3><'), ftsOverflow, pageRows],
  },
  {
    name: 'search: words, total only',
    run: search({ terms: ['alpha'], limit: 0 }),
    uses: [ftsTimed, ftsOverflow, pageRows],
  },
  // searchSql without words: the page by seq backwards, the total through a timestamp index.
  {
    name: 'search: no words',
    run: search({}),
    uses: [rowid('<?'), overflowArm, pageRows],
    scans: [countAll],
  },
  {
    name: 'search: no words, total only',
    run: search({ limit: 0 }),
    uses: [],
    scans: [countAll],
  },
  {
    name: 'search: no words, device',
    run: search({ devices: ['device-1'] }),
    uses: [
      'SEARCH item USING COVERING INDEX content_items_device_timestamp_id (device_name=?)',
      rowid('<?'),
      overflowArm,
    ],
  },
  {
    name: 'search: no words, time bounds',
    run: search({ from: t(10), to: t(500) }),
    uses: [
      'SEARCH item USING COVERING INDEX content_items_timestamp_id (timestamp_ms>? AND timestamp_ms<?)',
      rowid('>? AND rowid<?'),
      overflowArm,
    ],
  },
  {
    name: 'search: no words, type',
    run: search({ contentTypes: ['frames'] }),
    // content_type has no index: the total is counted in the search index's type column.
    uses: [ftsTimed, ftsOverflow, rowid('<?'), rowid('>?')],
  },
  {
    name: 'search: no words, device, time bounds, type, app name',
    run: search({
      devices: ['device-1'],
      from: t(10),
      to: t(500),
      contentTypes: ['frames'],
      appName: 'term',
    }),
    uses: [
      'SEARCH item USING INDEX content_items_device_timestamp_id (device_name=? AND timestamp_ms>? AND timestamp_ms<?)',
      rowid('>? AND rowid<?'),
    ],
  },
  // scanChunks: the first chunk, then the keyset one after it.
  {
    name: 'scanRange',
    run: (store) => reading(() => chunks(store.scanRange({ to: t(100) }, { chunkSize: 20 }))),
    uses: [
      'SEARCH content_items USING INDEX content_items_timestamp_id (timestamp_ms<?)',
      'SEARCH content_items USING INDEX content_items_timestamp_id ((timestamp_ms,id)>(?,?) AND timestamp_ms<?)',
    ],
  },
  {
    name: 'scanRange: device',
    run: (store) =>
      reading(() =>
        chunks(store.scanRange({ from: t(1), to: t(100), device: 'device-1' }, { chunkSize: 20 })),
      ),
    uses: [
      'SEARCH content_items USING INDEX content_items_device_timestamp_id (device_name=? AND timestamp_ms>? AND timestamp_ms<?)',
    ],
  },
  {
    name: 'countRange',
    run: (store) => reading(() => store.countRange({ to: t(100) })),
    uses: ['SEARCH content_items USING COVERING INDEX content_items_timestamp_id (timestamp_ms<?)'],
  },
  {
    name: 'countRange: device',
    run: (store) => reading(() => store.countRange({ from: t(1), to: t(100), device: 'device-1' })),
    uses: [
      'SEARCH content_items USING COVERING INDEX content_items_device_timestamp_id (device_name=? AND timestamp_ms>? AND timestamp_ms<?)',
    ],
  },
  {
    name: 'filePathsInUse',
    run: (store) => reading(() => store.filePathsInUse(['/frames/f1.mp4', '/gone.mp4'])),
    uses: ['SEARCH content_items USING COVERING INDEX content_items_file_path (file_path=?)'],
  },
  // The writer thread's operations (sqlite-writer.operations.ts).
  {
    name: 'content.insert (insertContentRow, claimAll)',
    run: (_, file) =>
      writing(file, (c) =>
        writeOperations['content.insert'](c, { table, docs: [claiming('new', ['claim-1'])] }),
      ),
    uses: [
      'SEARCH content_items USING INTEGER PRIMARY KEY (rowid>? AND rowid<?)',
      'SEARCH content_items USING INTEGER PRIMARY KEY (rowid>?)',
      'SEARCH content_items USING COVERING INDEX sqlite_autoindex_content_items_1 (id=?)',
      'SEARCH content_items_claims USING PRIMARY KEY (key=?)',
    ],
  },
  {
    name: 'content.delete (subtractDeleted, deleteItemRows)',
    run: (_, file) =>
      writing(file, (c) =>
        writeOperations['content.delete'](c, { table, ids: ['a0', 'f1'], archived: true }),
      ),
    uses: [
      'SEARCH content_items USING INDEX sqlite_autoindex_content_items_1 (id=?)',
      'SEARCH content_items USING COVERING INDEX sqlite_autoindex_content_items_1 (id=?)',
      'SEARCH content_items_claims USING COVERING INDEX content_items_claims_owner (owner=?)',
      ftsScan('0:='),
    ],
  },
  {
    name: 'content.deleteRange: everything (deleteRangeRows, settleItemTimes)',
    run: (_, file) =>
      writing(file, (c) =>
        writeOperations['content.deleteRange'](c, { table, range: {}, limit: 10 }),
      ),
    uses: [
      'SEARCH content_items_claims USING COVERING INDEX content_items_claims_owner (owner=?)',
      'SEARCH content_items USING INDEX content_items_device_timestamp_id (device_name=? AND timestamp_ms>? AND timestamp_ms<?)',
    ],
    // The oldest `limit` items: the (timestamp_ms, id) index in order, stopped at the limit.
    scans: ['SCAN content_items USING INDEX content_items_timestamp_id'],
  },
  {
    name: 'content.deleteRange: time bounds',
    run: (_, file) =>
      writing(file, (c) =>
        writeOperations['content.deleteRange'](c, { table, range: day, limit: 10 }),
      ),
    uses: [
      'SEARCH content_items USING INDEX content_items_timestamp_id (timestamp_ms>? AND timestamp_ms<?)',
    ],
  },
  {
    name: 'content.deleteRange: device',
    run: (_, file) =>
      writing(file, (c) =>
        writeOperations['content.deleteRange'](c, {
          table,
          range: { device: 'device-1' },
          limit: 10,
        }),
      ),
    uses: ['SEARCH content_items USING INDEX content_items_device_timestamp_id (device_name=?)'],
  },
  {
    name: 'content.deleteRange: device and time bounds',
    run: (_, file) =>
      writing(file, (c) =>
        writeOperations['content.deleteRange'](c, {
          table,
          range: { ...day, device: 'device-1' },
          limit: 10,
        }),
      ),
    uses: [
      'SEARCH content_items USING INDEX content_items_device_timestamp_id (device_name=? AND timestamp_ms>? AND timestamp_ms<?)',
    ],
  },
  {
    name: 'content.forgetDevice (settleItemTimes)',
    run: (_, file) =>
      writing(file, (c) =>
        writeOperations['content.forgetDevice'](c, { table, device: 'device-1' }),
      ),
    uses: [
      'SEARCH content_items USING INDEX content_items_device_timestamp_id (device_name=? AND timestamp_ms>? AND timestamp_ms<?)',
    ],
  },
  {
    name: 'content.schema: counters created beside stored items (recountDevice)',
    run: (_, file) =>
      writing(file, (c) => {
        c.db.exec(`DROP TABLE ${table}_devices; DROP TABLE ${table}_device_hours;
                   DROP TABLE ${table}_device_archive`);
        writeOperations['content.schema'](c, { table });
      }),
    uses: ['SEARCH content_items USING INDEX content_items_device_timestamp_id (device_name=?)'],
    // Once per file, by design: the devices of every stored item.
    scans: ['SCAN content_items USING COVERING INDEX content_items_device_timestamp_id'],
  },
  {
    name: 'content.schema: search index refilled (indexStoredItems)',
    run: (_, file) =>
      writing(file, (c) => {
        c.db.exec(`DROP TABLE ${table}_search`);
        writeOperations['content.schema'](c, { table });
      }),
    uses: [
      'SEARCH content_items USING INDEX sqlite_autoindex_content_items_1 (id>?)',
      'SEARCH content_items USING COVERING INDEX sqlite_autoindex_content_items_1 (id=?)',
    ],
    // The first 1,000 ids: the id index in order, stopped at the limit.
    scans: ['SCAN content_items USING INDEX sqlite_autoindex_content_items_1'],
  },
];

/** Which operations seek each secondary index (SEARCH … USING INDEX): the table. */
const seekers: Record<string, string[]> = {
  content_items_timestamp_id: [
    'search: no words, time bounds',
    'scanRange',
    'countRange',
    'content.deleteRange: time bounds',
  ],
  content_items_device_timestamp_id: [
    'search: no words, device',
    'search: no words, device, time bounds, type, app name',
    'scanRange: device',
    'countRange: device',
    'content.deleteRange: everything (deleteRangeRows, settleItemTimes)',
    'content.deleteRange: time bounds',
    'content.deleteRange: device',
    'content.deleteRange: device and time bounds',
    'content.forgetDevice (settleItemTimes)',
    'content.schema: counters created beside stored items (recountDevice)',
  ],
  content_items_file_path: ['filePathsInUse'],
  content_items_claims_owner: [
    'content.delete (subtractDeleted, deleteItemRows)',
    'content.deleteRange: everything (deleteRangeRows, settleItemTimes)',
    'content.deleteRange: time bounds',
    'content.deleteRange: device',
    'content.deleteRange: device and time bounds',
  ],
};

let reads: Ran[] = [];

/** The statements `read` sends to the database, in order. */
async function reading(read: () => Promise<unknown>): Promise<Ran[]> {
  reads = [];
  await read();
  return reads;
}

describe('sqlite content store query plans', () => {
  let dir: string;
  let file: string;
  let database: SqliteDatabase;
  let store: ContentStore;
  /** Each case's plan lines, over all the item and claims statements it ran. */
  const plans = new Map<string, string[]>();

  beforeAll(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'sf-sqlite-plans-'));
    file = path.join(dir, 'screenfleet.db');
    database = await openSqliteDatabase(file);
    store = createSqliteContentStore({ database: recordingReads(database) });
    await store.ensureIndexes();
    await store.insertItems(items(2000));
    for (const { name, run } of cases) {
      const statements = onItemTables(await run(store, file));
      plans.set(
        name,
        statements.flatMap((statement) => plan(file, statement)),
      );
    }
  });

  afterAll(async () => {
    await store.close();
    await database.close();
    await rm(dir, { recursive: true, force: true });
  });

  it.each(cases.map((c) => [c.name, c] as const))('%s', (name, { uses, scans = [] }) => {
    const lines = plans.get(name)!;
    expect(lines.length).toBeGreaterThan(0);
    expect(lines).toEqual(expect.arrayContaining(uses));
    expect(unique(lines.filter(isItemTableScan)).sort()).toEqual([...scans].sort());
  });

  it('seeks each secondary index of the item and claims tables, from these operations', () => {
    const seeking = (index: string) =>
      cases
        .filter(({ name }) =>
          plans
            .get(name)!
            .some((line) => /^SEARCH /.test(line) && line.includes(`INDEX ${index} `)),
        )
        .map(({ name }) => name);
    for (const [index, operations] of Object.entries(seekers)) {
      expect({ index, operations: seeking(index) }).toEqual({ index, operations });
    }
  });
});

/** The database, with each read's statement put in `reads` before it runs. */
function recordingReads(database: SqliteDatabase): SqliteDatabase {
  const readers: SqliteReaders = {
    query: (sql, params, options) => {
      reads.push({ sql, params: [...params] });
      return database.readers.query(sql, params, options);
    },
    withoutReads: (task, waitMs) => database.readers.withoutReads(task, waitMs),
    stats: () => database.readers.stats(),
    close: () => database.readers.close(),
  };
  return { file: database.file, writer: database.writer, readers, close: () => database.close() };
}

/**
 * Runs a writer operation as the writer thread would (in a transaction, on a plain connection),
 * records each statement it runs, and rolls it back so every case sees the same items.
 */
function writing(file: string, write: (connection: WriterConnection) => unknown): Promise<Ran[]> {
  const db = openSqliteConnection(file);
  const ran: Ran[] = [];
  try {
    db.exec('BEGIN IMMEDIATE');
    const connection = recordingConnection(db, ran);
    write(connection);
    writePendingSearchRows(connection); // as the thread does, at the transaction's top level
    db.exec('ROLLBACK');
  } finally {
    db.close();
  }
  return Promise.resolve(ran);
}

/** A writer connection whose statements, prepared through `sql` or `db`, note their runs. */
function recordingConnection(db: Database.Database, ran: Ran[]): WriterConnection {
  const prepared = statementCache(db);
  const recordingDb = new Proxy(db, {
    get(target, key) {
      if (key === 'prepare') return (sql: string) => recorded(target.prepare(sql), sql, ran);
      const value: unknown = Reflect.get(target, key);
      return typeof value === 'function' ? (value as Method).bind(target) : value;
    },
  });
  return {
    db: recordingDb,
    sql: (sql) => recorded(prepared(sql), sql, ran),
    bytes: 0,
    pendingSearchRows: [],
  };
}

type Method = (...args: unknown[]) => unknown;

function recorded(statement: Database.Statement, sql: string, ran: Ran[]): Database.Statement {
  const runs = new Set<PropertyKey>(['run', 'get', 'all', 'iterate']);
  const proxy: Database.Statement = new Proxy(statement, {
    get(target, key) {
      const value: unknown = Reflect.get(target, key);
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        if (runs.has(key)) ran.push({ sql, params: args });
        const result = (value as Method).apply(target, args);
        return result === target ? proxy : result; // safeIntegers() and the like chain
      };
    },
  });
  return proxy;
}

/** The statements that read or write the item table or its claims, each text once. */
function onItemTables(ran: Ran[]): Ran[] {
  const byText = new Map<string, Ran>();
  for (const statement of ran) {
    if (/"content_items(_claims)?"/.test(statement.sql) && !byText.has(statement.sql)) {
      byText.set(statement.sql, statement);
    }
  }
  return [...byText.values()];
}

function plan(file: string, { sql, params }: Ran): string[] {
  const db = openSqliteConnection(file);
  try {
    const rows = db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...params) as Array<{
      detail: string;
    }>;
    return rows.map((row) => row.detail);
  } finally {
    db.close();
  }
}

async function chunks<T>(scan: AsyncIterable<T>): Promise<T[]> {
  const all: T[] = [];
  for await (const chunk of scan) all.push(chunk);
  return all;
}

const unique = (lines: string[]) => [...new Set(lines)];

function claiming(id: string, claims: string[]): NewContentDocument {
  return { ...frame(id, 'delta'), claims };
}

/** Frames and transcriptions of two devices, a second apart. */
function items(n: number): NewContentDocument[] {
  return Array.from({ length: n }, (_, i) => {
    const overrides = {
      device_name: i % 2 === 0 ? 'device-1' : 'device-2',
      timestamp: t(i),
      received_at: t(i),
    };
    return i % 3 === 0
      ? audio(`a${i}`, `alpha beta ${i}`, overrides)
      : frame(`f${i}`, `alpha gamma ${i}`, overrides);
  });
}
