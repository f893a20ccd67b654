import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { StoreUnavailableError } from '@screenfleet/contracts';
import { waitFor } from '@screenfleet/runtime';
import { createMongoAuditStore } from '@screenfleet/storage';
import { MongoClient } from 'mongodb';
import { startFerretDb, stopFerretDb, type FerretDbHandle } from '../../../bin/ferretdb';
import { freePort } from '../../../bin/ports';
import { databaseName, mongoUrl } from '../../../test/services';
import { buildAuditRow, describeAuditStoreContract } from './audit-store.contract';

const database = databaseName('audit');
let places = 0;

afterAll(async () => {
  const client = await MongoClient.connect(mongoUrl(), { serverSelectionTimeoutMS: 5000 });
  try {
    await client.db(database).dropDatabase();
  } finally {
    await client.close();
  }
});

// Each test gets its own collection (audit_<n>); the database goes at the end.
describeAuditStoreContract('mongo (FerretDB)', () => {
  places += 1;
  const collection = `audit_${places}`;
  return Promise.resolve({
    open: () => createMongoAuditStore({ url: mongoUrl(), database, collection }),
    cleanup: () => Promise.resolve(),
  });
});

describe('mongo audit store', () => {
  // A port nothing listens on (the shared server is left running for the other files), then a
  // server of its own started there: one store throughout, as a worker started while its store
  // was down keeps the store it opened.
  it('when the server cannot be reached, then every operation rejects StoreUnavailableError naming the store, promptly; once a server listens there, the same store works', async () => {
    const port = await freePort();
    const store = createMongoAuditStore({
      url: `mongodb://127.0.0.1:${port}/`,
      database,
      serverSelectionTimeoutMS: 300,
    });
    const dataDir = mkdtempSync(path.join(os.tmpdir(), 'sf-audit-late-'));
    let server: FerretDbHandle | undefined;
    try {
      const operations: Array<[string, () => Promise<unknown>]> = [
        ['ensureSchema', () => store.ensureSchema()],
        ['insertRows', () => store.insertRows([buildAuditRow()])],
        ['query', () => store.query({ limit: 10, device: 'office-1' })],
        ['deleteOlderThan', () => store.deleteOlderThan(new Date(), { limit: 10 })],
      ];
      for (const [operation, run] of operations) {
        const started = Date.now();
        const error = await run().then(
          () => undefined,
          (e: unknown) => e,
        );
        expect(error).toBeInstanceOf(StoreUnavailableError);
        expect((error as Error).message).toMatch(`audit store unavailable during ${operation}`);
        expect(Date.now() - started).toBeLessThan(3000);
      }

      server = await startFerretDb({ port, dataDir });
      const row = buildAuditRow();
      await waitFor(
        () =>
          store.insertRows([row]).then(
            () => true,
            () => false,
          ),
        {
          timeoutMs: 20_000,
          what: 'the store to reach the server started after its first failures',
        },
      );
      await store.ensureSchema();
      expect(await store.query({ limit: 10 })).toEqual({ rows: [row], nextCursor: null });
    } finally {
      await store.close();
      if (server) await stopFerretDb(server.pidFile, 'SIGTERM');
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
