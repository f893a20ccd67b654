import { mkdtempSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { StoreUnavailableError } from '@screenfleet/contracts';
import {
  createSqliteArchiveStateStore,
  createSqliteContentStore,
  openSqliteConnection,
  openSqliteDatabase,
  type ContentDocument,
  type ContentStore,
} from '@screenfleet/storage';
import { buildState } from './archive-state-store.contract';
import { describeContentSearchContract } from './content-search.contract';
import { buildItem, describeContentStoreContract, t } from './content-store.contract';

// A real file in a temp directory (fsync, WAL, locks), so this is an integration test even
// without a server. One file per test, removed after it.
function tempDir(): string {
  return mkdtempSync(path.join(os.tmpdir(), 'sf-sqlite-content-'));
}

function freshStore() {
  const dir = tempDir();
  const store = createSqliteContentStore({ file: path.join(dir, 'screenfleet.db') });
  return Promise.resolve({
    store,
    cleanup: async () => {
      await store.close();
      await rm(dir, { recursive: true, force: true });
    },
  });
}
describeContentStoreContract('sqlite (libsql)', freshStore);
describeContentSearchContract('sqlite (libsql)', freshStore);

describe('sqlite content store', () => {
  let dir: string;
  let file: string;
  const toClose: Array<{ close(): unknown }> = [];

  beforeEach(() => {
    dir = tempDir();
    file = path.join(dir, 'data', 'screenfleet.db');
  });

  afterEach(async () => {
    for (const closable of toClose.splice(0).reverse()) await closable.close();
    await rm(dir, { recursive: true, force: true });
  });

  async function open(options: { busyTimeoutMs?: number } = {}): Promise<ContentStore> {
    const database = await openSqliteDatabase(file, options);
    toClose.push(database);
    return createSqliteContentStore({ database });
  }

  async function scanIds(store: ContentStore, chunkSize = 100): Promise<string[]> {
    const seen: string[] = [];
    for await (const chunk of store.scanRange({ to: t(100_000) }, { chunkSize })) {
      seen.push(...chunk.map((doc) => doc._id));
    }
    return seen;
  }

  const items = (count: number, prefix = 'item'): ContentDocument[] =>
    Array.from({ length: count }, (_, i) =>
      buildItem({ _id: `${prefix}-${String(i).padStart(6, '0')}`, timestamp: t(i) }),
    );

  it('when two stores open the same file (two connections), then each sees the other’s writes at once', async () => {
    const [a, b] = [await open(), await open()];
    await a.ensureIndexes();
    await b.ensureIndexes();

    expect(await a.insertItems(items(5))).toEqual({ inserted: 5, alreadyStored: 0 });
    expect(await scanIds(b)).toEqual(items(5).map((doc) => doc._id));
    expect(await b.insertItems(items(7))).toEqual({ inserted: 2, alreadyStored: 5 });
    expect(await a.countRange({ to: t(100) })).toBe(7);

    expect(await b.deleteByIds(['item-000000', 'item-000006'])).toBe(2);
    expect(await a.countRange({ to: t(100) })).toBe(5);
    expect(await a.filePathsInUse(['/frames/item-000000.mp4', '/frames/item-000001.mp4'])).toEqual(
      new Set(['/frames/item-000001.mp4']),
    );
  });

  it('when items are written, the database closed and opened again, then every item is there intact', async () => {
    const written = items(1000);
    const first = await open();
    for (let i = 0; i < written.length; i += 100) {
      await first.insertItems(written.slice(i, i + 100));
    }
    await first.close();
    await toClose.pop()!.close();

    const reopened = await open();
    const stored: ContentDocument[] = [];
    for await (const chunk of reopened.scanRange({ to: t(100_000) }, { chunkSize: 300 })) {
      stored.push(...chunk);
    }

    expect(stored).toEqual(written);
    expect(await reopened.insertItems(written.slice(0, 10))).toEqual({
      inserted: 0,
      alreadyStored: 10,
    });
  });

  it('when a store is given a shared database, then close leaves it open for the other stores in the file', async () => {
    const database = await openSqliteDatabase(file);
    toClose.push(database);
    const content = createSqliteContentStore({ database });
    const state = createSqliteArchiveStateStore({ database });
    await content.insertItems(items(3));

    await content.close();

    expect(await state.load(buildState({ failures: 2 }))).toEqual(buildState({ failures: 2 }));
    await state.close();
    expect(await createSqliteContentStore({ database }).countRange({ to: t(100) })).toBe(3);
  });

  it('when a store opens its own file, then close closes it and the data stays', async () => {
    const own = createSqliteContentStore({ file });
    await own.insertItems(items(2));
    await own.close();

    expect(await scanIds(await open())).toEqual(items(2).map((doc) => doc._id));
  });

  it('when more ids are deleted or looked up than SQLite allows variables, then it still works in one call', async () => {
    const store = await open();
    const many = items(40_000);
    await store.insertItems(many);
    const ids = [...many.map((doc) => doc._id), 'unknown-1', 'unknown-2'];

    expect((await store.filePathsInUse(many.map((doc) => doc.file_path!))).size).toBe(40_000);
    expect(await store.deleteByIds(ids)).toBe(40_000);
    expect(await store.countRange({ to: t(100_000) })).toBe(0);
  });

  it('when another connection holds the write lock past the busy timeout, then writes reject StoreUnavailableError, and succeed once it lets go', async () => {
    const store = await open({ busyTimeoutMs: 200 });
    await store.ensureIndexes();
    const holder = openSqliteConnection(file);
    toClose.push(holder);
    holder.exec('BEGIN IMMEDIATE');

    const started = Date.now();
    const error = await store.insertItems(items(1)).then(
      () => undefined,
      (e: unknown) => e,
    );

    expect(error).toBeInstanceOf(StoreUnavailableError);
    expect((error as StoreUnavailableError).message).toMatch(
      /content store unavailable during insertItems/,
    );
    expect((error as StoreUnavailableError).cause).toMatchObject({ code: 'SQLITE_BUSY' });
    expect(Date.now() - started).toBeLessThan(3000);
    // Readers are not blocked by a writer in WAL mode.
    expect(await store.countRange({ to: t(100) })).toBe(0);

    holder.exec('ROLLBACK');
    expect(await store.insertItems(items(1))).toEqual({ inserted: 1, alreadyStored: 0 });
  });

  it('when the directory does not exist, then opening creates it, in WAL mode with synchronous FULL', async () => {
    const database = await openSqliteDatabase(path.join(dir, 'a', 'b', 'screenfleet.db'));
    toClose.push(database);

    expect(await database.writer.write('connection.settings', {})).toEqual({
      journalMode: 'wal',
      synchronous: 2, // FULL
      busyTimeoutMs: 5000,
    });
  });

  it('when the file cannot be opened, then it says so with StoreUnavailableError', async () => {
    // The path is a directory.
    await expect(openSqliteDatabase(dir)).rejects.toThrow(StoreUnavailableError);
    await expect(openSqliteDatabase(dir)).rejects.toThrow(/cannot open SQLite database/);
  });

  it('when the table name is not a plain identifier, or neither file nor database is given, then it refuses', async () => {
    const database = await openSqliteDatabase(file);
    toClose.push(database);

    expect(() => createSqliteContentStore({ database, table: 'x"; DROP TABLE y; --' })).toThrow(
      TypeError,
    );
    expect(() => createSqliteContentStore({})).toThrow(/file or a database/);
  });
});
