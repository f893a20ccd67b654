import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { StoreUnavailableError } from '@screenfleet/contracts';
import { waitFor } from '@screenfleet/runtime';
import { createMongoTokenStore } from '@screenfleet/storage';
import { MongoClient } from 'mongodb';
import { startFerretDb, stopFerretDb, type FerretDbHandle } from '../../../bin/ferretdb';
import { freePort } from '../../../bin/ports';
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
  it('when a token document was stored before tokens had rate limits, then it is listed with rateLimits null', async () => {
    reader ??= await MongoClient.connect(mongoUrl(), { serverSelectionTimeoutMS: 5000 });
    const tokensCollection = `tokens_old_${Date.now()}`;
    const { id, secretHash, name, scopes, devices, createdAt } = buildToken();
    await reader
      .db(database)
      .collection<{ _id: string; [field: string]: unknown }>(tokensCollection)
      .insertOne({
        _id: id,
        name,
        scopes,
        devices,
        created_at: createdAt,
        expires_at: null,
        secret_hash: secretHash,
      });
    const store = createMongoTokenStore({ url: mongoUrl(), database, tokensCollection });
    try {
      expect(await store.listTokens()).toEqual([
        {
          ...{ id, secretHash, name, scopes, devices, createdAt },
          expiresAt: null,
          lastUsedAt: null,
          revokedAt: null,
          rateLimits: null,
        },
      ]);
    } finally {
      await store.close();
    }
  });

  // A port nothing listens on (the shared server is left running for the other files), then a
  // server of its own started there: one store throughout, as a worker started while its store
  // was down keeps the store it opened.
  it('when the server cannot be reached, then every operation rejects StoreUnavailableError naming the store, promptly; once a server listens there, the same store works', async () => {
    const now = new Date();
    const port = await freePort();
    const store = createMongoTokenStore({
      url: `mongodb://127.0.0.1:${port}/`,
      database,
      serverSelectionTimeoutMS: 300,
    });
    const dataDir = mkdtempSync(path.join(os.tmpdir(), 'sf-tokens-late-'));
    let server: FerretDbHandle | undefined;
    try {
      const operations: Array<[string, () => Promise<unknown>]> = [
        ['ensureSchema', () => store.ensureSchema()],
        ['insertToken', () => store.insertToken(buildToken())],
        ['listTokens', () => store.listTokens()],
        ['revokeToken', () => store.revokeToken('tok_1', now)],
        ['recordLastUse', () => store.recordLastUse([{ id: 'tok_1', at: now }])],
        ['insertEnrolmentCode', () => store.insertEnrolmentCode(buildCode())],
        ['listEnrolmentCodes', () => store.listEnrolmentCodes()],
        ['revokeEnrolmentCode', () => store.revokeEnrolmentCode('enr_1', now)],
        ['enrol', () => store.enrol('0'.repeat(64), now, () => buildToken())],
      ];
      for (const [operation, run] of operations) {
        const started = Date.now();
        const error = await run().then(
          () => undefined,
          (e: unknown) => e,
        );
        expect(error).toBeInstanceOf(StoreUnavailableError);
        expect((error as Error).message).toMatch(`token store unavailable during ${operation}`);
        expect(Date.now() - started).toBeLessThan(3000);
      }

      server = await startFerretDb({ port, dataDir });
      const token = buildToken();
      await waitFor(
        () =>
          store.insertToken(token).then(
            () => true,
            () => false,
          ),
        {
          timeoutMs: 20_000,
          what: 'the store to reach the server started after its first failures',
        },
      );
      expect((await store.listTokens()).map((stored) => stored.id)).toEqual([token.id]);
    } finally {
      await store.close();
      if (server) await stopFerretDb(server.pidFile, 'SIGTERM');
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
