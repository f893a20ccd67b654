import { StoreUnavailableError, TimeoutError } from '@screenfleet/contracts';
import { createMongoContentStore, type ContentStore } from '@screenfleet/storage';
import { MongoClient } from 'mongodb';
import { databaseName, killMongo, mongoUrl, startMongo } from '../../../test/services';
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
  // Two writers a counter: FerretDB v1 runs any update as a read, then a replace in its own
  // transaction, so more writers updating one existing document at once can lose increments
  // there (MongoDB's updates are atomic); what this checks is the race to create one.
  it('when two workers store the first items of a new device at the same instant, then both inserts succeed and every item is counted (FerretDB runs an upsert as a read then an insert: E11000 for the later one)', async () => {
    collections += 1;
    const collection = `content_items_${collections}`;
    const workers = Array.from({ length: 2 }, () =>
      createMongoContentStore({ url: mongoUrl(), database, collection }),
    );
    try {
      for (let round = 0; round < 20; round++) {
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
        expect(counted?.byContentType[0]?.itemsStored).toBe(6);
      }
    } finally {
      await Promise.all(workers.map((worker) => worker.close()));
    }
  });
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

    // The items' insert goes through; the counters' update is swallowed (a wedged FerretDB).
    proxy.stall(['update']);
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
