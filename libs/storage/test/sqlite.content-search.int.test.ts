import { mkdtempSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { TimeoutError } from '@screenfleet/contracts';
import {
  ContentRejectedError,
  createSqliteContentStore,
  openSqliteConnection,
  openSqliteDatabase,
  type ContentDocument,
  type ContentStore,
  type SearchQuery,
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

  async function openDatabase(): Promise<SqliteDatabase> {
    const database = await openSqliteDatabase(file);
    toClose.push(database);
    return database;
  }

  async function open(database?: SqliteDatabase): Promise<ContentStore> {
    const store = createSqliteContentStore({ database: database ?? (await openDatabase()) });
    toClose.push(store);
    return store;
  }

  /** A look at the file from a connection of the test's own. */
  function inspect<T>(look: (db: ReturnType<typeof openSqliteConnection>) => T): T {
    const db = openSqliteConnection(file);
    try {
      return look(db);
    } finally {
      db.close();
    }
  }

  const indexRows = () =>
    inspect(
      (db) =>
        (db.prepare('SELECT count(*) AS n FROM content_items_search').get() as { n: number }).n,
    );

  describe('when the file was written before search existed', () => {
    // The table as the store created it then, and its rows as it wrote them.
    function writeOldFile(docs: ContentDocument[]): void {
      const db = openSqliteConnection(file);
      db.exec(`
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
      const insert = db.prepare(
        'INSERT INTO content_items (id, device_name, timestamp_ms, file_path, document) VALUES (?, ?, ?, ?, ?)',
      );
      for (const doc of docs) {
        insert.run(doc._id, doc.device_name, doc.timestamp.getTime(), doc.file_path, toJson(doc));
      }
      db.close();
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

      const store = await open();

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
      expect(indexRows()).toBe(old.length);

      // Every item intact, in scan order; and once only, though a second connection opens it.
      const scanned: ContentDocument[] = [];
      for await (const chunk of (await open()).scanRange({ to: t(10_000) }, { chunkSize: 700 })) {
        scanned.push(...chunk);
      }
      expect(scanned).toHaveLength(old.length);
      expect(new Map(scanned.map((doc) => [doc._id, doc]))).toEqual(
        new Map(old.map((doc) => [doc._id, doc])),
      );
      expect(indexRows()).toBe(old.length);
    });

    it('then the store goes on as before: inserts, duplicates and deletes keep the index in step', async () => {
      writeOldFile(old.slice(0, 10));
      const store = await open();

      expect(await store.insertItems(old.slice(5, 20))).toEqual({ inserted: 10, alreadyStored: 5 });
      expect(await store.deleteByIds(['old-0000', 'old-0015'])).toBe(2);

      expect((await store.search(query({ terms: ['screen'], limit: 0 }))).total).toBe(18);
      expect(indexRows()).toBe(18);
    });
  });

  it('when the file was written with 32,768 places a millisecond (layout 1), then opening rebuilds it once into the current layout, and a millisecond takes any number of items', async () => {
    // The table and index as the store made them before the overflow range, and two items in
    // one millisecond at places 0 and 1 as it wrote them.
    const db = openSqliteConnection(file);
    db.exec(`
      CREATE TABLE "content_items" (
        seq INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, device_name TEXT NOT NULL,
        timestamp_ms INTEGER NOT NULL, file_path TEXT, content_type TEXT NOT NULL,
        app_name_folded TEXT, window_name_folded TEXT, text_length INTEGER NOT NULL,
        document TEXT NOT NULL,
        CONSTRAINT seq_within_its_millisecond
          CHECK (seq >= timestamp_ms * 32768 AND seq < (timestamp_ms + 1) * 32768));
      CREATE VIRTUAL TABLE "content_items_search" USING fts5(words, device, type,
        content = '', contentless_delete = 1, tokenize = 'unicode61 remove_diacritics 2');`);
    const old = [
      frame('v1-a', 'kept from before', { timestamp: t(7) }),
      frame('v1-b', 'kept from before too', { timestamp: t(7) }),
    ];
    old.forEach((doc, place) => {
      const seq = `${doc.timestamp.getTime()} * 32768 + ${place}`;
      db.prepare(
        `INSERT INTO content_items (seq, id, device_name, timestamp_ms, file_path, content_type,
           app_name_folded, window_name_folded, text_length, document)
         VALUES (${seq}, ?, ?, ?, ?, 'frames', 'terminal', 'bash', 16, ?)`,
      ).run(doc._id, doc.device_name, doc.timestamp.getTime(), doc.file_path, toJson(doc));
      db.prepare(
        `INSERT INTO content_items_search (rowid, words, device, type)
         VALUES (${seq}, 'kept from before', 'd', 'frames')`,
      ).run();
    });
    db.close();

    const store = await open();
    await store.ensureIndexes();

    expect(await store.search(query({ terms: ['kept'] }))).toEqual({
      items: [old[1], old[0]],
      total: 2,
    });
    const layout = inspect((connection) => ({
      version: connection
        .prepare(`SELECT version FROM schema_versions WHERE name = 'content_items'`)
        .get(),
      table: connection
        .prepare(`SELECT sql FROM sqlite_schema WHERE name = 'content_items'`)
        .get() as { sql: string },
    }));
    expect(layout.version).toMatchObject({ version: 2 });
    expect(layout.table.sql).toContain('16384');
    // 20,000 more in that millisecond: past its 16,384 places, into the overflow range.
    for (let i = 0; i < 20_000; i += 5000) {
      await store.insertItems(
        Array.from({ length: 5000 }, (_, j) => frame(`more-${i + j}`, 'kept', { timestamp: t(7) })),
      );
    }
    expect((await store.search(query({ terms: ['kept'], limit: 0 }))).total).toBe(20_002);
    expect(indexRows()).toBe(20_002);
  });

  it('when the search index was dropped, then the next schema step rebuilds it from the items', async () => {
    const store = await open();
    await store.insertItems([frame('a', 'kept words', { timestamp: t(1) }), frame('b', 'more')]);
    inspect((db) => db.exec('DROP TABLE content_items_search'));

    await store.ensureIndexes();

    expect(await store.search(query({ terms: ['kept'] }))).toMatchObject({ total: 1 });
    expect(indexRows()).toBe(2);
  });

  it('when an insert fails part way, then neither the items nor their index rows are kept', async () => {
    const store = await open();
    const good = frame('good', 'together', { timestamp: t(1) });
    const outOfRange = frame('bad', 'together', { timestamp: new Date(8.64e15) });

    const error = await store.insertItems([good, outOfRange]).then(
      () => undefined,
      (e: unknown) => e,
    );

    expect(error).toBeInstanceOf(ContentRejectedError);
    expect((error as Error).message).toMatch(/timestamp/);
    expect(await store.search(query({ terms: ['together'] }))).toEqual({ items: [], total: 0 });
    expect(indexRows()).toBe(0);
  });

  describe('when the writer commits many batches as one group', () => {
    // FTS5 segments in the index's data table: a row's id is its segment's id shifted left by
    // 37 bits (fts5_index.c, FTS5_SEGMENT_ROWID); segment 0 holds the structure and averages.
    const segments = () =>
      inspect(
        (db) =>
          (
            db
              .prepare(
                'SELECT count(DISTINCT rowid >> 37) AS n FROM content_items_search_data WHERE rowid >> 37 > 0',
              )
              .get() as { n: number }
          ).n,
      );

    /**
     * Holds the file's write lock while `post` queues writes, so that the writer thread takes
     * them together: at most two transactions (the first write may be taken alone, waiting for
     * the lock; everything queued behind it goes into the next).
     */
    async function asOneGroup(post: () => Array<Promise<unknown>>): Promise<unknown[]> {
      const lock = openSqliteConnection(file);
      lock.exec('BEGIN IMMEDIATE');
      const posted = post().map((write) =>
        write.then(
          (value) => ({ value }),
          (error: unknown) => ({ error }),
        ),
      );
      await new Promise((resolve) => setTimeout(resolve, 50));
      lock.exec('ROLLBACK');
      lock.close();
      return (await Promise.all(posted)).map((outcome) => {
        if ('error' in outcome) throw outcome.error;
        return outcome.value;
      });
    }

    it('then their search rows make one FTS5 segment a commit, in seq order whatever the batches, and a failed batch leaves none', async () => {
      const database = await openDatabase();
      const store = await open(database);
      await store.ensureIndexes();
      // No merges, so that every segment written stays countable.
      inspect((db) => {
        db.exec(
          `INSERT INTO content_items_search (content_items_search, rank) VALUES ('automerge', 0)`,
        );
        db.exec(
          `INSERT INTO content_items_search (content_items_search, rank) VALUES ('crisismerge', 1000)`,
        );
      });
      const segmentsBefore = segments();
      const transactionsBefore = database.writer.stats().transactions;
      // 20 batches of two devices whose items interleave in time (seq order is not batch order),
      // and one batch refused part way (an item out of the storable range).
      const batches = Array.from({ length: 20 }, (_, b) =>
        Array.from({ length: 5 }, (_, i) =>
          frame(`b${b}-${i}`, 'grouped words', {
            device_name: `device-${b % 2}`,
            timestamp: t(1000 + b + i * 20),
          }),
        ),
      );
      const refused = [
        frame('refused-good', 'grouped words', { timestamp: t(500) }),
        frame('refused-bad', 'grouped words', { timestamp: new Date(8.64e15) }),
      ];

      const [refusal, ...inserted] = await asOneGroup(() => [
        store.insertItems(refused).then(
          () => 'stored',
          (error: unknown) => (error instanceof ContentRejectedError ? 'refused' : String(error)),
        ),
        ...batches.map((batch) => store.insertItems(batch).then(({ inserted: n }) => String(n))),
      ]);

      expect(refusal).toBe('refused');
      expect(inserted).toEqual(batches.map(() => '5'));
      const transactions = database.writer.stats().transactions - transactionsBefore;
      expect(transactions).toBeLessThanOrEqual(2);
      // At most one segment a commit (none for one that stored nothing, the refused batch's
      // alone); each batch's own savepoint would have written one a batch.
      const written = segments() - segmentsBefore;
      expect(written).toBeGreaterThanOrEqual(1);
      expect(written).toBeLessThanOrEqual(transactions);
      expect(indexRows()).toBe(100);
      const found = await store.search(query({ terms: ['grouped'], limit: 100 }));
      expect(found.total).toBe(100);
      expect(found.items.map((item) => item._id)).not.toContain('refused-good');
    });

    it('then an item deleted in the same group as its insert leaves no search row behind', async () => {
      const store = await open();
      await store.ensureIndexes();

      await asOneGroup(() => [
        store.insertItems([frame('gone', 'shortlived', { timestamp: t(1) })]),
        store.insertItems([frame('kept', 'shortlived', { timestamp: t(2) })]),
        store.deleteByIds(['gone']),
      ]);

      expect(indexRows()).toBe(1);
      expect(await store.search(query({ terms: ['shortlived'] }))).toMatchObject({
        total: 1,
        items: [expect.objectContaining({ _id: 'kept' })],
      });
    });
  });

  it('when a search runs past its timeout, then the store stops it and rejects TimeoutError, and searches go on', async () => {
    const store = await open();
    // 30,000 items with a common word; a window filter that matches none makes the search
    // read every one of them.
    for (let i = 0; i < 30_000; i += 1000) {
      await store.insertItems(
        Array.from({ length: 1000 }, (_, j) =>
          frame(`many-${i + j}`, `common words here ${i + j}`, {
            timestamp: t(i + j),
            window_name: `window ${i + j}`,
          }),
        ),
      );
    }
    const heavy = query({ terms: ['common'], windowName: 'no such window', order: 'relevance' });
    let started = performance.now();
    expect((await store.search(heavy)).total).toBe(0);
    const natural = performance.now() - started;
    expect(natural).toBeGreaterThan(20); // else the timeout below proves nothing

    started = performance.now();
    const error = await store.search(heavy, { timeoutMs: 1 }).then(
      () => undefined,
      (e: unknown) => e,
    );

    expect(error).toBeInstanceOf(TimeoutError);
    expect((error as Error).message).toBe(
      'the search ran past its deadline (1 ms) and was stopped',
    );
    expect((await store.search(query({ terms: ['common'], limit: 1 }))).total).toBe(30_000);
    expect((await store.search(heavy, { timeoutMs: 60_000 })).total).toBe(0);
  });

  it('when far more items share one millisecond than it has time-ordered places for, then every one is stored, found, counted and ordered', async () => {
    // A bulk import with one timestamp: 50,000 items, 16,384 time-ordered places, the rest in
    // the overflow range.
    const store = await open();
    const count = 50_000;
    const same = (i: number) => frame(`same-${i}`, 'crowd', { timestamp: t(5) });
    for (let i = 0; i < count; i += 1000) {
      const batch = Array.from({ length: 1000 }, (_, j) => same(i + j));
      expect(await store.insertItems(batch)).toEqual({ inserted: 1000, alreadyStored: 0 });
    }
    await store.insertItems([
      frame('before', 'crowd', { timestamp: new Date(t(5).getTime() - 1) }),
    ]);
    await store.insertItems([frame('after', 'crowd', { timestamp: new Date(t(5).getTime() + 1) })]);
    expect(await store.insertItems([same(0), same(count - 1)])).toEqual({
      inserted: 0,
      alreadyStored: 2,
    });

    // Newest first; in the one millisecond, the last stored first (the overflow range's).
    const ids = (result: { items: ContentDocument[] }) => result.items.map((doc) => doc._id);
    const newestAt = (offset: number, limit: number, more: Partial<SearchQuery> = {}) =>
      store.search(query({ terms: ['crowd'], offset, limit, ...more }));
    expect(ids(await newestAt(0, 3))).toEqual(['after', `same-${count - 1}`, `same-${count - 2}`]);
    // Across the border of the two ranges: index k of the page order is same-(count - k).
    const border = count - 16_384;
    expect(ids(await newestAt(border - 1, 4))).toEqual(
      [border - 1, border, border + 1, border + 2].map((k) => `same-${count - k}`),
    );
    const last = await newestAt(count - 1, 5);
    expect(ids(last)).toEqual(['same-1', 'same-0', 'before']);
    expect(last.total).toBe(count + 2);
    // Relevance: all alike, so newest first too; without words, the same order.
    expect(ids(await newestAt(border - 1, 4, { order: 'relevance' }))).toEqual(
      ids(await newestAt(border - 1, 4)),
    );
    expect(ids(await store.search(query({ offset: border - 1, limit: 4 })))).toEqual(
      ids(await newestAt(border - 1, 4)),
    );

    // Exact totals with time bounds, by the items' real timestamps in both ranges.
    const total = async (more: Partial<SearchQuery>) =>
      (await store.search(query({ limit: 0, ...more }))).total;
    for (const terms of [['crowd'], []]) {
      expect(await total({ terms, from: t(5), to: t(5) })).toBe(count);
      expect(await total({ terms, from: new Date(t(5).getTime() + 1) })).toBe(1);
      expect(await total({ terms, to: new Date(t(5).getTime() - 1) })).toBe(1);
      expect(await total({ terms })).toBe(count + 2);
      // A type filter: without words, counted in the search index's type column, both ranges.
      const frames: Partial<SearchQuery> = { terms, contentTypes: ['frames'] };
      expect(await total({ ...frames, from: t(5), to: t(5) })).toBe(count);
      expect(await total({ ...frames, from: new Date(t(5).getTime() + 1) })).toBe(1);
      expect(await total(frames)).toBe(count + 2);
      expect(await total({ terms, contentTypes: ['transcription'] })).toBe(0);
    }
    expect(await store.countRange({ from: t(5), to: new Date(t(5).getTime() + 1) })).toBe(count);

    // Deletes reach both ranges and their index rows.
    expect(await store.deleteByIds([same(0)._id, same(count - 1)._id])).toBe(2);
    expect(await total({ terms: ['crowd'], from: t(5), to: t(5) })).toBe(count - 2);
    expect(indexRows()).toBe(count);
  });
});
