import { StoreUnavailableError } from '@screenfleet/contracts';
import { createMongoArchiveStateStore, type ArchiveStateStore } from '@screenfleet/storage';
import { MongoClient } from 'mongodb';
import { databaseName, killMongo, mongoUrl, startMongo } from '../../../test/services';
import { buildState, describeArchiveStateStoreContract } from './archive-state-store.contract';
import { rejection } from './contract-support';

const database = databaseName('archive_state');
let places = 0;

function makeStore(
  place: number,
  extra: { serverSelectionTimeoutMS?: number; client?: MongoClient } = {},
): ArchiveStateStore {
  return createMongoArchiveStateStore({
    ...(extra.client ? { client: extra.client } : { url: mongoUrl() }),
    database,
    collection: `archive_state_${place}`,
    leaseCollection: `archive_lease_${place}`,
    ...(extra.serverSelectionTimeoutMS === undefined
      ? {}
      : { serverSelectionTimeoutMS: extra.serverSelectionTimeoutMS }),
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

// Each test gets its own pair of collections; the database goes at the end.
describeArchiveStateStoreContract('mongo (FerretDB)', () => {
  places += 1;
  const place = places;
  return Promise.resolve({ open: () => makeStore(place), cleanup: () => Promise.resolve() });
});

describe('mongo archive state store', () => {
  it('when given a shared client, then it uses it and close leaves it open', async () => {
    places += 1;
    const client = await MongoClient.connect(mongoUrl(), { serverSelectionTimeoutMS: 5000 });
    try {
      const store = makeStore(places, { client });
      await store.load(buildState({ failures: 1 }));
      await store.close();

      const stored = await client.db(database).collection(`archive_state_${places}`).findOne({});
      expect(stored).toMatchObject({ _id: 'state', failures: 1 });
      expect(stored?.updated_at).toBeInstanceOf(Date);
    } finally {
      await client.close();
    }
  });

  it('when the server is killed, then every operation rejects StoreUnavailableError promptly, and after it restarts the same store works with the state intact', async () => {
    places += 1;
    const store = makeStore(places, { serverSelectionTimeoutMS: 2000 });
    try {
      const saved = buildState({ failures: 4, last_error: 'before the outage' });
      await store.load(buildState());
      await store.save(saved);
      expect(await store.acquireLease('a', 60_000, new Date())).toBe(true);

      try {
        await killMongo();
        for (const operation of [
          () => store.load(buildState()),
          () => store.save(buildState()),
          () => store.acquireLease('a', 60_000, new Date()),
          () => store.releaseLease('a'),
        ]) {
          const started = Date.now();
          const error = await rejection(operation());
          expect(error).toBeInstanceOf(StoreUnavailableError);
          expect((error as StoreUnavailableError).message).toMatch(/archive state store/);
          expect((error as StoreUnavailableError).cause).toBeInstanceOf(Error);
          expect(Date.now() - started).toBeLessThan(8000);
        }
      } finally {
        await startMongo();
      }

      expect(await store.load(buildState())).toEqual(saved);
      expect(await store.acquireLease('b', 60_000, new Date())).toBe(false);
      expect(await store.acquireLease('a', 60_000, new Date())).toBe(true);
    } finally {
      await store.close();
    }
  });
});
