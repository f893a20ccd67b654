import { StoreUnavailableError } from '@screenfleet/contracts';
import { createMongoTokenStore, type TokenStore } from '@screenfleet/storage';
import { MongoClient } from 'mongodb';
import { databaseName, mongoUrl } from '../../../test/services';
import { buildCode, buildToken, describeTokenStoreContract } from './token-store.contract';

const database = databaseName('tokens');
let places = 0;
let reader: MongoClient | undefined;

afterAll(async () => {
  const client =
    reader ?? (await MongoClient.connect(mongoUrl(), { serverSelectionTimeoutMS: 5000 }));
  try {
    await client.db(database).dropDatabase();
  } finally {
    await client.close();
  }
});

/** Every document of the place's collections, as EJSON text (what the store holds). */
async function storedText(prefixes: string[]): Promise<string> {
  reader ??= await MongoClient.connect(mongoUrl(), { serverSelectionTimeoutMS: 5000 });
  const db = reader.db(database);
  const names = (await db.listCollections({}, { nameOnly: true }).toArray())
    .map((collection) => collection.name)
    .filter((name) => prefixes.some((prefix) => name.startsWith(prefix)));
  const documents = await Promise.all(names.map((name) => db.collection(name).find({}).toArray()));
  return JSON.stringify(documents);
}

// Each test gets its own collections (tokens_<n>..., codes_<n>...); the database goes at the end.
describeTokenStoreContract('mongo (FerretDB)', () => {
  places += 1;
  const tokensCollection = `tokens_${places}`;
  const codesCollection = `codes_${places}`;
  return Promise.resolve({
    open: () =>
      createMongoTokenStore({ url: mongoUrl(), database, tokensCollection, codesCollection }),
    storedText: () => storedText([`${tokensCollection}`, `${codesCollection}`]),
    cleanup: () => Promise.resolve(),
  });
});

describe('mongo token store', () => {
  // A port nothing listens on: the shared server is left running for the other files. A store
  // per operation: with driver 6.22 a client whose first connect failed keeps its closed
  // topology, and every later operation fails MongoTopologyClosedError (the same for every
  // Mongo store of this package; started while the store is down, a process must restart).
  it('when the server cannot be reached, then every operation rejects StoreUnavailableError naming the store, promptly', async () => {
    const now = new Date();
    const operations: Array<[string, (store: TokenStore) => Promise<unknown>]> = [
      ['ensureSchema', (store) => store.ensureSchema()],
      ['insertToken', (store) => store.insertToken(buildToken())],
      ['listTokens', (store) => store.listTokens()],
      ['revokeToken', (store) => store.revokeToken('tok_1', now)],
      ['recordLastUse', (store) => store.recordLastUse([{ id: 'tok_1', at: now }])],
      ['insertEnrolmentCode', (store) => store.insertEnrolmentCode(buildCode())],
      ['listEnrolmentCodes', (store) => store.listEnrolmentCodes()],
      ['revokeEnrolmentCode', (store) => store.revokeEnrolmentCode('enr_1', now)],
      ['enrol', (store) => store.enrol('0'.repeat(64), now, () => buildToken())],
    ];
    for (const [operation, run] of operations) {
      const store = createMongoTokenStore({
        url: 'mongodb://127.0.0.1:1/',
        database,
        serverSelectionTimeoutMS: 300,
      });
      try {
        const started = Date.now();
        const error = await run(store).then(
          () => undefined,
          (e: unknown) => e,
        );
        expect(error).toBeInstanceOf(StoreUnavailableError);
        expect((error as Error).message).toMatch(`token store unavailable during ${operation}`);
        expect(Date.now() - started).toBeLessThan(3000);
      } finally {
        await store.close();
      }
    }
  });
});
