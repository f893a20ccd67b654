import { StoreUnavailableError, TimeoutError } from '@screenfleet/contracts';
import {
  createMongoContentStore,
  type ContentStore,
  type MongoContentStoreOptions,
} from '@screenfleet/storage';
import { MongoClient } from 'mongodb';
import { databaseName, killMongo, mongoUrl, startMongo } from '../../../test/services';
import { waitFor } from '@screenfleet/runtime';
import { startRefusingProxy, type RefusingProxy } from '../../../test/support/mongo-refusing-proxy';
import { describeContentSearchContract } from './content-search.contract';
import { buildItem, describeContentStoreContract, t } from './content-store.contract';

const database = databaseName('content_store');
let collections = 0;

function makeStore(serverSelectionTimeoutMS?: number): ContentStore {
  collections += 1;
  return createMongoContentStore({
    url: mongoUrl(),
    database,
    collection: `content_items_${collections}`,
    ...(serverSelectionTimeoutMS === undefined ? {} : { serverSelectionTimeoutMS }),
  });
}

afterAll(async () => {
  const client = await MongoClient.connect(mongoUrl(), { serverSelectionTimeoutMS: 5000 });
  try {
    await client.db(database).dropDatabase();
  } finally {
    await client.close();
  }
});

// Each test gets its own collection; the database goes at the end.
function freshStore() {
  const store = makeStore();
  return Promise.resolve({ store, cleanup: () => store.close() });
}
describeContentStoreContract('mongo (FerretDB)', freshStore);
describeContentSearchContract('mongo (FerretDB)', freshStore);

describe('mongo content store indexes', () => {
  it('when indexes are ensured, then they are made on MongoDB only: FerretDB scans for every query but by _id whatever the indexes', async () => {
    const store = makeStore();
    const client = await MongoClient.connect(mongoUrl(), { serverSelectionTimeoutMS: 5000 });
    try {
      await store.ensureIndexes();
      await store.insertItems([buildItem({ _id: 'one', timestamp: t(1) })]);
      const db = client.db(database);
      const ferretDb = 'ferretdbVersion' in (await db.command({ buildInfo: 1 }));
      const indexes = await db.collection(`content_items_${collections}`).listIndexes().toArray();
      const names = indexes.map((index) => String((index as { name: unknown }).name)).sort();

      const workers = ['_id_', 'device_name_1_timestamp_1', 'tags_1', 'timestamp_1'];
      const search = ['search_terms_1_timestamp_-1', 'timestamp_1__id_1'];
      expect(names).toEqual((ferretDb ? ['_id_'] : [...workers, ...search]).sort());
    } finally {
      await client.close();
      await store.close();
    }
  });
});

describe('mongo content store counters, written by several workers at once', () => {
  // FerretDB v1 runs any update as a read then a replace: concurrent $inc on one counter lost
  // increments (9 of 12 here) and concurrent upserts creating one met E11000. Counts are inserts.
  it('when four workers store items of new devices at the same instant, then every insert succeeds and every item is counted', async () => {
    collections += 1;
    const collection = `content_items_${collections}`;
    const workers = Array.from({ length: 4 }, () =>
      createMongoContentStore({ url: mongoUrl(), database, collection }),
    );
    try {
      for (let round = 0; round < 10; round++) {
        const device = `new-device-${round}`;
        await Promise.all(
          workers.map((worker, w) =>
            worker.insertItems(
              Array.from({ length: 3 }, (_, i) =>
                buildItem({ _id: `${round}-${w}-${i}`, device_name: device, timestamp: t(i) }),
              ),
            ),
          ),
        );
        const [counted] = await workers[0]!.deviceCounters({ now: t(10), devices: [device] });
        expect(counted?.byContentType[0]?.itemsStored).toBe(12);
      }
    } finally {
      await Promise.all(workers.map((worker) => worker.close()));
    }
  });
});

describe('mongo content store counts, kept as deltas and folded', () => {
  let client: MongoClient;
  const stores: ContentStore[] = [];
  const now = t(100);
  const hour = (i: number) => new Date(Date.UTC(2026, 9, 1) + i * 3_600_000);

  beforeAll(async () => {
    client = await MongoClient.connect(mongoUrl(), { serverSelectionTimeoutMS: 5000 });
  });
  afterAll(async () => {
    await Promise.all(stores.map((store) => store.close()));
    await client.close();
  });

  function storeOn(collection: string, options: Partial<MongoContentStoreOptions> = {}) {
    const store = createMongoContentStore({ url: mongoUrl(), database, collection, ...options });
    stores.push(store);
    return store;
  }
  const newCollection = () => `content_items_${(collections += 1)}`;
  const deltasOf = (collection: string) =>
    client.db(database).collection(`${collection}_count_deltas`);
  const waitUntil = (done: () => Promise<boolean>, timeoutMs: number) =>
    waitFor(done, { timeoutMs, intervalMs: 50, what: 'the folder' });
  const everything = (store: ContentStore) =>
    Promise.all([
      store.deviceCounters({ now, hoursSince: t(-1e7) }),
      store.deviceListing(),
      store.newestItemTimes(),
    ]);

  it('when a message’s items were stored but its worker died before counting them, then its next delivery counts them once, and a re-send by another message counts nothing', async () => {
    const collection = newCollection();
    const store = storeOn(collection, { countFolding: { intervalMs: 0 } });
    const docs = [0, 1, 2].map((i) => ({
      ...buildItem({ _id: `m-${i}`, timestamp: t(i) }),
      batch: 'message-1',
    }));
    // What the killed worker left: its items, stored by its insert, and no delta.
    await client.db(database).collection<{ _id: string }>(collection).insertMany(docs);

    expect(await store.insertItems(docs)).toEqual({ inserted: 0, alreadyStored: 3 });
    await store.insertItems(docs); // delivered once more
    await store.insertItems(docs.map((doc) => ({ ...doc, batch: 'message-2' })));

    const [device] = await store.deviceCounters({ now });
    expect(device?.byContentType[0]).toMatchObject({ itemsStored: 3, lastItemTime: t(2) });
  });

  it('when a delete fails half way and is run again, then its items are subtracted once (its delta goes first, keyed by the items)', async () => {
    const collection = newCollection();
    const proxy = await startRefusingProxy(mongoUrl());
    try {
      const store = storeOn(collection, {
        url: proxy.url,
        operationTimeoutMS: 1000,
        countFolding: { intervalMs: 0 },
      });
      const docs = [0, 1, 2].map((i) => buildItem({ _id: `x${i}`, timestamp: t(i) }));
      await store.insertItems(docs);

      // The counts' write never answers: this delete fails (a worker dying there).
      proxy.stall(['insert'], `${collection}_count_deltas`);
      await expect(store.deleteByIds(['x0', 'x1'], { archived: true })).rejects.toThrow();
      proxy.allow();
      expect(await store.deleteByIds(['x0', 'x1'], { archived: true })).toBe(2);
      expect(await store.deleteByIds(['x0', 'x1'], { archived: true })).toBe(0);

      const [device] = await store.deviceCounters({ now });
      expect(device).toMatchObject({ itemsArchived: 2 });
      expect(device?.byContentType[0]).toMatchObject({ itemsStored: 1 });
    } finally {
      proxy.allow();
      await proxy.close();
    }
  }, 30_000);

  it('when the deltas are folded, then every read answers the same, the deltas are gone, and no command held more than a few updates (500 hours of 50 devices)', async () => {
    const collection = newCollection();
    const writer = storeOn(collection, { countFolding: { intervalMs: 0 } });
    const docs = Array.from({ length: 500 }, (_, i) =>
      buildItem({ _id: `h${i}`, device_name: `device-${i % 50}`, timestamp: hour(i) }),
    );
    await writer.insertItems(docs);
    await writer.deleteByIds(
      docs.slice(0, 200).map((doc) => doc._id),
      { archived: true },
    );
    await writer.deleteRange({ device: 'device-7', from: hour(400) }, { limit: 100 });
    await writer.deleteRange({ device: 'device-8' }, { limit: 100 });
    await writer.forgetDevice('device-8');
    const unfolded = await everything(writer);
    expect(await deltasOf(collection).countDocuments()).toBeGreaterThan(0);

    storeOn(collection, { countFolding: { foldAfterMs: 0, intervalMs: 50 } });
    await waitUntil(async () => (await deltasOf(collection).countDocuments()) === 0, 20_000);

    expect(await everything(writer)).toEqual(unfolded);
    expect(unfolded[0].map((d) => d.deviceName)).not.toContain('device-8');
    expect(unfolded[0].find((d) => d.deviceName === 'device-7')?.byContentType[0]).toMatchObject({
      itemsStored: 4, // 10, less 4 archived, less 2 from hour 400 on
      firstItemTime: hour(207),
      lastItemTime: hour(357),
    });
  }, 60_000);

  it('when a folder stops half way through a round (its deltas’ delete never answered), then reads count each item once meanwhile, and the next fold finishes the round', async () => {
    const collection = newCollection();
    const proxy = await startRefusingProxy(mongoUrl());
    try {
      const writer = storeOn(collection, { countFolding: { intervalMs: 0 } });
      await writer.insertItems(
        [0, 1, 2, 3].map((i) => buildItem({ _id: `r${i}`, timestamp: hour(i) })),
      );
      const expected = await everything(writer);
      proxy.stall(['delete'], `${collection}_count_deltas`);
      storeOn(collection, {
        url: proxy.url,
        operationTimeoutMS: 1000,
        countFolding: { foldAfterMs: 0, intervalMs: 100 },
      });
      const rounds = client.db(database).collection(`${collection}_count_rounds`);
      await waitUntil(async () => (await rounds.countDocuments()) === 1, 20_000);
      await waitUntil(
        async () =>
          (await client.db(database).collection(`${collection}_devices`).countDocuments()) > 0,
        20_000,
      );

      expect(await everything(writer)).toEqual(expected);
      proxy.allow();
      await waitUntil(async () => (await rounds.countDocuments()) === 0, 20_000);
      expect(await deltasOf(collection).countDocuments()).toBe(0);
      expect(await everything(writer)).toEqual(expected);
    } finally {
      proxy.allow();
      await proxy.close();
    }
  }, 60_000);
});

describe('mongo content store, when the server stops answering', () => {
  let proxy: RefusingProxy | undefined;
  let store: ContentStore | undefined;

  afterEach(async () => {
    proxy?.allow();
    await store?.close();
    await proxy?.close();
  });

  it('when a command is never answered, then the operation rejects StoreUnavailableError at its deadline, and the store works once the server answers again', async () => {
    proxy = await startRefusingProxy(mongoUrl());
    collections += 1;
    store = createMongoContentStore({
      url: proxy.url,
      database,
      collection: `content_items_${collections}`,
      operationTimeoutMS: 1000,
    });
    await store.insertItems([buildItem({ _id: 'first', timestamp: t(1) })]);

    // Its inserts are swallowed (a wedged FerretDB: the command never answers).
    proxy.stall(['insert']);
    const started = Date.now();
    const error = await store.insertItems([buildItem({ _id: 'stuck', timestamp: t(2) })]).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(StoreUnavailableError);
    expect((error as Error).message).toMatch(/content store unavailable during insertItems/);
    expect(Date.now() - started).toBeLessThan(5000);

    proxy.allow();
    expect(await store.insertItems([buildItem({ _id: 'after', timestamp: t(3) })])).toEqual({
      inserted: 1,
      alreadyStored: 0,
    });
  });
});

describe('mongo content store search timeout', () => {
  it('when a search runs past its timeout, then the server stops it (maxTimeMS) and it rejects TimeoutError', async () => {
    const store = makeStore();
    try {
      await store.insertItems(
        Array.from({ length: 2000 }, (_, i) =>
          buildItem({ _id: `slow-${i}`, timestamp: t(i), window_name: `window ${i}` }),
        ),
      );
      const heavy = {
        terms: ['ls'],
        contentTypes: ['frames' as const],
        windowName: 'no such window',
        order: 'newest' as const,
        limit: 20,
        offset: 0,
      };
      // FerretDB reads every document for this; well over a millisecond.
      const error = await store.search(heavy, { timeoutMs: 1 }).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(TimeoutError);
      expect((error as Error).message).toMatch(/ran past its deadline \(1 ms\).*maxTimeMS/);
      expect((await store.search(heavy, { timeoutMs: 60_000 })).total).toBe(0);
    } finally {
      await store.close();
    }
  });
});

describe('mongo content store, when the database server goes away', () => {
  let store: ContentStore | undefined;

  afterEach(async () => {
    await store?.close();
  });

  it('when the server is killed, then operations reject StoreUnavailableError promptly, and after it restarts the same store works with nothing lost', async () => {
    store = makeStore(2000);
    await store.ensureIndexes();
    const before = Array.from({ length: 50 }, (_, i) =>
      buildItem({ _id: `before-${String(i).padStart(3, '0')}`, timestamp: t(i) }),
    );
    expect(await store.insertItems(before)).toEqual({ inserted: 50, alreadyStored: 0 });

    const during = [buildItem({ _id: 'during', timestamp: t(100) })];
    try {
      await killMongo();

      // The pooled connection is dead now: the first insert meets it, later ones find no server.
      for (const operation of [
        () => store!.insertItems(during),
        () => store!.insertItems(during),
        () => store!.countRange({ to: t(1000) }),
      ]) {
        const started = Date.now();
        const error = await operation().then(
          () => undefined,
          (e: unknown) => e,
        );
        expect(error).toBeInstanceOf(StoreUnavailableError);
        expect((error as StoreUnavailableError).cause).toBeInstanceOf(Error);
        expect(Date.now() - started).toBeLessThan(8000);
      }
    } finally {
      await startMongo();
    }

    const after = [buildItem({ _id: 'after', timestamp: t(200) }), ...before.slice(0, 5)];
    expect(await store.insertItems(after)).toEqual({ inserted: 1, alreadyStored: 5 });
    const stored: string[] = [];
    for await (const chunk of store.scanRange({ to: t(1000) }, { chunkSize: 20 })) {
      stored.push(...chunk.map((doc) => doc._id));
    }
    expect(stored).toEqual([...before.map((doc) => doc._id), 'after']);
  });
});
