import {
  backfillSearchTerms,
  createMongoContentStore,
  type ContentDocument,
  type ContentStore,
  type SearchBackfillReport,
} from '@screenfleet/storage';
import { MongoClient } from 'mongodb';
import { databaseName, mongoUrl } from '../../../test/services';
import { audio, frame, query } from './content-search.contract';
import { t } from './content-store.contract';

const database = databaseName('search_backfill');
let client: MongoClient;
let collections = 0;

beforeAll(async () => {
  client = await MongoClient.connect(mongoUrl(), { serverSelectionTimeoutMS: 5000 });
});

afterAll(async () => {
  await client.db(database).dropDatabase();
  await client.close();
});

describe('backfillSearchTerms (FerretDB)', () => {
  let collection: string;
  let store: ContentStore;

  beforeEach(async () => {
    collections += 1;
    collection = `content_items_${collections}`;
    store = createMongoContentStore({ url: mongoUrl(), database, collection });
    await store.ensureIndexes();
  });

  afterEach(() => store.close());

  // Items as the store wrote them before search existed: the documents alone.
  const old: ContentDocument[] = [
    ...Array.from({ length: 23 }, (_, i) =>
      frame(`old-${String(i).padStart(2, '0')}`, `Écran numéro ${i}`, { timestamp: t(i) }),
    ),
    audio('old-audio', 'budget call', { timestamp: t(100) }),
  ];
  const fresh = frame('fresh', 'écran neuf', { timestamp: t(200) });

  const backfill = (progress: SearchBackfillReport[] = []) =>
    backfillSearchTerms({
      url: mongoUrl(),
      database,
      collection,
      chunkSize: 5,
      onProgress: (report) => progress.push(report),
    });

  it('when items were stored without search fields, then the backfill makes them found, in chunks, and a second run does nothing', async () => {
    await client.db(database).collection<ContentDocument>(collection).insertMany(old);
    await store.insertItems([fresh]);
    expect(await store.search(query({ terms: ['ecran'] }))).toEqual({ items: [fresh], total: 1 });

    const progress: SearchBackfillReport[] = [];
    const report = await backfill(progress);

    expect(report).toEqual({ scanned: 24, updated: 24 });
    expect(progress.map((p) => p.scanned)).toEqual([5, 10, 15, 20, 24]);
    const found = await store.search(query({ terms: ['ecran'], limit: 100 }));
    expect(found.total).toBe(24);
    expect(found.items).toEqual([fresh, ...old.slice(0, 23).reverse()]);
    expect(await store.search(query({ terms: ['numero', '7'] }))).toEqual({
      items: [old[7]],
      total: 1,
    });
    expect(await store.search(query({ terms: ['budget'], minLength: 11, maxLength: 11 }))).toEqual({
      items: [old[23]],
      total: 1,
    });

    expect(await backfill()).toEqual({ scanned: 0, updated: 0 });
  });

  it('when there is nothing to backfill, then it reports zero', async () => {
    await store.insertItems([fresh]);

    expect(await backfill()).toEqual({ scanned: 0, updated: 0 });
  });

  it('when the server cannot be reached, then it rejects StoreUnavailableError', async () => {
    await expect(
      backfillSearchTerms({
        url: 'mongodb://127.0.0.1:1/',
        database,
        serverSelectionTimeoutMS: 300,
      }),
    ).rejects.toMatchObject({ name: 'StoreUnavailableError' });
  });
});
