import { mkdtempSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import {
  ContentRejectedError,
  createSqliteContentStore,
  openSqliteDatabase,
  type ContentDocument,
  type ContentStore,
  type SqliteDatabase,
} from '@screenfleet/storage';
import { toJson } from '../src/sqlite-json';
import { audio, frame, query } from './content-search.contract';
import { t } from './content-store.contract';

// The sqlite store's own side of search: what the contract cannot see (files written before
// search existed, the search index kept with the rows, its limits). Real files, as elsewhere.
describe('sqlite content store search index', () => {
  let dir: string;
  let file: string;
  const toClose: Array<{ close(): unknown }> = [];

  beforeEach(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'sf-sqlite-search-'));
    file = path.join(dir, 'screenfleet.db');
  });

  afterEach(async () => {
    for (const closable of toClose.splice(0).reverse()) await closable.close();
    await rm(dir, { recursive: true, force: true });
  });

  function openDatabase(): SqliteDatabase {
    const database = openSqliteDatabase(file);
    toClose.push(database);
    return database;
  }

  function open(database = openDatabase()): ContentStore {
    const store = createSqliteContentStore({ database });
    toClose.push(store);
    return store;
  }

  const indexRows = (database: SqliteDatabase) =>
    (database.db.prepare('SELECT count(*) AS n FROM content_items_search').get() as { n: number })
      .n;

  describe('when the file was written before search existed', () => {
    // The table as the store created it then, and its rows as it wrote them.
    function writeOldFile(docs: ContentDocument[]): void {
      const database = openSqliteDatabase(file);
      database.db.exec(`
        CREATE TABLE IF NOT EXISTS "content_items" (
          id TEXT PRIMARY KEY NOT NULL,
          device_name TEXT NOT NULL,
          timestamp_ms INTEGER NOT NULL,
          file_path TEXT,
          document TEXT NOT NULL
        );
        CREATE INDEX IF NOT EXISTS "content_items_timestamp_id" ON "content_items" (timestamp_ms, id);
        CREATE INDEX IF NOT EXISTS "content_items_device_timestamp_id" ON "content_items" (device_name, timestamp_ms, id);
        CREATE INDEX IF NOT EXISTS "content_items_file_path" ON "content_items" (file_path);`);
      const insert = database.db.prepare(
        'INSERT INTO content_items (id, device_name, timestamp_ms, file_path, document) VALUES (?, ?, ?, ?, ?)',
      );
      for (const doc of docs) {
        insert.run(doc._id, doc.device_name, doc.timestamp.getTime(), doc.file_path, toJson(doc));
      }
      database.close();
    }

    // More than one chunk of the rebuild (1,000 rows), with timestamps shared and out of order.
    const old = [
      ...Array.from({ length: 2500 }, (_, i) =>
        frame(`old-${String(i).padStart(4, '0')}`, `archived screen number${i % 7}`, {
          timestamp: t(2500 - Math.floor(i / 2)),
          app_name: i % 2 === 0 ? 'Firefox' : null,
        }),
      ),
      audio('old-audio', 'a call about the Café budget', { timestamp: t(3000) }),
    ];

    it('then opening it indexes its items once, and search finds them with every filter', async () => {
      writeOldFile(old);

      const database = openDatabase();
      const store = open(database);

      const all = await store.search(query({ terms: ['archived'], limit: 0 }));
      expect(all.total).toBe(2500);
      expect(await store.search(query({ terms: ['cafe', 'budget'] }))).toEqual({
        items: [old[2500]],
        total: 1,
      });
      const filtered = await store.search(
        query({ terms: ['number3'], appName: 'FIRE', from: t(1500), to: t(2000), limit: 1000 }),
      );
      const expected = old.filter(
        (doc, i) =>
          i < 2500 &&
          i % 7 === 3 &&
          i % 2 === 0 &&
          doc.timestamp >= t(1500) &&
          doc.timestamp <= t(2000),
      );
      expect(filtered.total).toBe(expected.length);
      expect(new Set(filtered.items.map((doc) => doc._id))).toEqual(
        new Set(expected.map((doc) => doc._id)),
      );
      expect(await store.search(query({ minLength: 28, maxLength: 28 }))).toMatchObject({
        total: 1,
      });
      expect(indexRows(database)).toBe(old.length);

      // Every item intact, in scan order; and once only, though a second connection opens it.
      const scanned: ContentDocument[] = [];
      for await (const chunk of open().scanRange({ to: t(10_000) }, { chunkSize: 700 })) {
        scanned.push(...chunk);
      }
      expect(scanned).toHaveLength(old.length);
      expect(new Map(scanned.map((doc) => [doc._id, doc]))).toEqual(
        new Map(old.map((doc) => [doc._id, doc])),
      );
      expect(indexRows(database)).toBe(old.length);
    });

    it('then the store goes on as before: inserts, duplicates and deletes keep the index in step', async () => {
      writeOldFile(old.slice(0, 10));
      const database = openDatabase();
      const store = open(database);

      expect(await store.insertItems(old.slice(5, 20))).toEqual({ inserted: 10, alreadyStored: 5 });
      expect(await store.deleteByIds(['old-0000', 'old-0015'])).toBe(2);

      expect((await store.search(query({ terms: ['screen'], limit: 0 }))).total).toBe(18);
      expect(indexRows(database)).toBe(18);
    });
  });

  it('when the search index was dropped, then the next schema step rebuilds it from the items', async () => {
    const database = openDatabase();
    const store = open(database);
    await store.insertItems([frame('a', 'kept words', { timestamp: t(1) }), frame('b', 'more')]);
    database.db.exec('DROP TABLE content_items_search');

    await store.ensureIndexes();

    expect(await store.search(query({ terms: ['kept'] }))).toMatchObject({ total: 1 });
    expect(indexRows(database)).toBe(2);
  });

  it('when an insert fails part way, then neither the items nor their index rows are kept', async () => {
    const database = openDatabase();
    const store = open(database);
    const good = frame('good', 'together', { timestamp: t(1) });
    const outOfRange = frame('bad', 'together', { timestamp: new Date(8.64e15) });

    const error = await store.insertItems([good, outOfRange]).then(
      () => undefined,
      (e: unknown) => e,
    );

    expect(error).toBeInstanceOf(ContentRejectedError);
    expect((error as Error).message).toMatch(/timestamp/);
    expect(await store.search(query({ terms: ['together'] }))).toEqual({ items: [], total: 0 });
    expect(indexRows(database)).toBe(0);
  });

  it('when more items share one millisecond than it has places for, then the next is refused and the others stay found', async () => {
    const database = openDatabase();
    const store = open(database);
    const places = 32768;
    const same = (i: number) => frame(`same-${i}`, 'crowd', { timestamp: t(5) });
    for (let i = 0; i < places; i += 4096) {
      await store.insertItems(Array.from({ length: 4096 }, (_, j) => same(i + j)));
    }
    await store.insertItems([
      frame('before', 'crowd', { timestamp: new Date(t(5).getTime() - 1) }),
    ]);
    await store.insertItems([frame('after', 'crowd', { timestamp: new Date(t(5).getTime() + 1) })]);

    await expect(store.insertItems([same(places)])).rejects.toBeInstanceOf(ContentRejectedError);

    expect((await store.search(query({ terms: ['crowd'], limit: 0 }))).total).toBe(places + 2);
    expect(
      (await store.search(query({ terms: ['crowd'], from: t(5), to: t(5), limit: 0 }))).total,
    ).toBe(places);
    const newest = await store.search(query({ terms: ['crowd'], limit: 2 }));
    expect(newest.items.map((doc) => doc._id)).toEqual(['after', `same-${places - 1}`]);
  });
});
