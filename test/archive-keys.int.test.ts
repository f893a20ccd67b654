/**
 * Archive keys that can change (issue 28, item 1), through the processes users run, in both
 * modes: the embedded launcher on one DATA_DIR (SQLite + a directory), and the distributed
 * services (ingest and archive workers as processes, RabbitMQ, FerretDB, MinIO), each phase a
 * restart with other keys on the same data, as an operator does it:
 *
 *   A no key: items of 2020 archived (plain objects)
 *   B ARCHIVE_ENCRYPTION_KEY=K1: items of 2021 archived (sealed with K1); a restore of
 *     2021-06-01..02 works (the issue: it failed on the 2020 manifest), so does one of 2020
 *   C no key: the start is refused, naming the 2021 manifest (K1's objects cannot be opened)
 *   D no key, ARCHIVE_ALLOW_UNREADABLE=true: starts; a restore of 2021 names the manifest in its
 *     answer and in last_error; one of 2020 does not even read it
 *   E `npm run archive:rekey` with ARCHIVE_ENCRYPTION_KEYS=K2,K1: every object sealed with K2,
 *     the old ones gone, storage_used = the bytes stored
 *   F ARCHIVE_ENCRYPTION_KEYS=K2 alone: starts, and every range restores with no unreadable object
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { MongoClient } from 'mongodb';
import { archiveKeyId, sealOf } from '@screenfleet/archive-worker';
import {
  createFilesystemArchiveStore,
  createS3ArchiveStore,
  type ArchiveStore,
} from '@screenfleet/storage';
import { waitUntil } from '../services/archive-worker/test/support';
import {
  databaseName,
  isolatedBroker,
  mongoUrl,
  s3BucketName,
  s3Settings,
  uniqueName,
} from './services';
import { buildItem } from './support/content';
import { get, post, startGateway, tokens, type RunningGateway } from './support/gateway';
import { startService, type ServiceProcess } from './support/processes';
import { startLauncher, type Launcher, type Mode } from './support/system';

const run = promisify(execFile);
const root = path.resolve(__dirname, '..');
const K1 = 'a1'.repeat(32);
const K2 = 'b2'.repeat(32);
const id = (hex: string) => archiveKeyId(Buffer.from(hex, 'hex'));
const gatewayTokens = JSON.stringify(Object.values(tokens));

/** Two items a year: one chunk (ARCHIVE_CHUNK_SIZE=2), so one manifest a year. */
const items = (year: number) =>
  [0, 1].map((i) =>
    buildItem(i, { timestamp: `${year}-06-01T10:00:0${i}Z`, window_name: `w-${year}-${i}` }),
  );

interface Phase {
  url: string;
  stop(): Promise<void>;
}

/** One mode's system, started and stopped as often as the test needs, always on the same data. */
interface System {
  start(env: Record<string, string>): Promise<Phase>;
  /** Starts with `env` and expects the start to be refused; resolves with what it printed. */
  refusedStart(env: Record<string, string>): Promise<string>;
  /** `npm run archive:rekey` against this system's data, with `env` (the keys). */
  rekey(env: Record<string, string>): Promise<{ code: number; stdout: string }>;
  archive: ArchiveStore;
  close(): Promise<void>;
}

async function embeddedSystem(): Promise<System> {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'sf-keys-'));
  const base = {
    DATA_DIR: dataDir,
    GATEWAY_TOKENS: gatewayTokens,
    GATEWAY_PORT: '0',
    GATEWAY_OPS_PORT: '0',
    ARCHIVE_CHUNK_SIZE: '2',
  };
  const launched: Launcher[] = [];
  const launch = (env: Record<string, string>) => {
    const launcher = startLauncher({ ...base, ...env });
    launched.push(launcher);
    return launcher;
  };
  return {
    async start(env) {
      const launcher = launch(env);
      const port = await launcher.apiPort;
      return {
        url: `http://127.0.0.1:${port}`,
        async stop() {
          expect(await launcher.stop('SIGINT')).toBe(0);
        },
      };
    },
    async refusedStart(env) {
      const launcher = launch(env);
      expect(await launcher.exited).toBe(1);
      return launcher.output();
    },
    rekey: (env) => cli({ DATA_DIR: dataDir, ...env }),
    archive: createFilesystemArchiveStore({ root: path.join(dataDir, 'archive') }),
    async close() {
      for (const launcher of launched) await launcher.stop('SIGKILL');
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

async function distributedSystem(): Promise<System> {
  const broker = await isolatedBroker();
  const database = databaseName('keys');
  const given = s3Settings();
  const bucket = given.bucket ?? s3BucketName('sf-keys');
  const prefix = uniqueName('keys');
  const stores = {
    MONGODB_URL: mongoUrl(),
    MONGODB_DATABASE: database,
    ARCHIVE_STORE: 's3',
    S3_ENDPOINT: given.endpoint,
    S3_REGION: given.region,
    S3_BUCKET: bucket,
    S3_PREFIX: prefix,
    S3_ACCESS_KEY: given.credentials.accessKeyId,
    S3_SECRET_KEY: given.credentials.secretAccessKey,
    S3_FORCE_PATH_STYLE: String(given.forcePathStyle),
  };
  const shared = {
    ...stores,
    RABBITMQ_URL: broker.url,
    INGEST_OPS_PORT: '0',
    ARCHIVE_OPS_PORT: '0',
    ARCHIVE_CHUNK_SIZE: '2',
    ARCHIVE_LEASE_TTL: '3s',
  };
  const gateway: RunningGateway = await startGateway(broker.url, {
    archiveTimeoutMs: 5000,
  });
  const ingest = startService('ingest-worker', shared);
  await ingest.waitForLog(/consuming content batches/);
  const workers: ServiceProcess[] = [];
  return {
    async start(env) {
      const worker = startService('archive-worker', { ...shared, ...env });
      workers.push(worker);
      await worker.waitForLog(/archive worker started/);
      return {
        url: gateway.url,
        async stop() {
          expect(await worker.stop('SIGTERM')).toBe(0);
        },
      };
    },
    async refusedStart(env) {
      const worker = startService('archive-worker', { ...shared, ...env });
      workers.push(worker);
      expect(await worker.exited(30_000)).toBe(1);
      return JSON.stringify(worker.lines);
    },
    rekey: (env) => cli({ ...stores, ...env }),
    archive: createS3ArchiveStore({
      endpoint: given.endpoint,
      region: given.region,
      forcePathStyle: given.forcePathStyle,
      credentials: given.credentials,
      bucket,
      prefix,
    }),
    async close() {
      for (const worker of workers) await worker.stop('SIGKILL');
      await ingest.stop();
      await gateway.close();
      await broker.remove();
      const client = new MongoClient(mongoUrl());
      await client
        .db(database)
        .dropDatabase()
        .finally(() => client.close());
    },
  };
}

function cli(env: Record<string, string>) {
  return run(
    process.execPath,
    [path.join(root, 'services/archive-worker/dist/entry/rekey-cli.js')],
    {
      env: { PATH: process.env.PATH ?? '', ...env },
    },
  ).then(
    ({ stdout }) => ({ code: 0, stdout }),
    (error: { code: number; stdout: string }) => ({ code: error.code, stdout: error.stdout }),
  );
}

const day = (year: number) => ({
  from: `${year}-06-01T00:00:00Z`,
  to: `${year}-06-02T00:00:00Z`,
});

describe.each<Mode>(['embedded', 'distributed'])(
  'archive keys that can change, %s mode',
  (mode) => {
    let system: System;

    beforeAll(async () => {
      system = mode === 'embedded' ? await embeddedSystem() : await distributedSystem();
    }, 60_000);
    afterAll(() => system?.close());

    /** Archives what is old now; resolves once nothing old is left. */
    async function archiveNow(url: string, first: boolean) {
      const asked = first
        ? await post(`${url}/archive/init`, { retention_days: 7 })
        : await post(`${url}/archive/run`, {});
      expect(asked.status).toBe(200);
      const status = await waitUntil(
        () => get(`${url}/archive/status`),
        (answer) => answer.body.pending_count === 0 && answer.body.is_uploading === false,
      );
      expect(status.body).toMatchObject({ pending_count: 0, last_error: null });
    }

    /** Posts the year's items; resolves once they are stored (or archived already by a pass). */
    async function addItems(url: string, year: number) {
      const chunks = Number((await get(`${url}/archive/status`)).body.chunks_uploaded);
      const added = await post(`${url}/add`, {
        device_name: `keys-${mode}`,
        content: { content_type: 'frames', data: items(year) },
      });
      expect(added.status).toBe(200);
      const stored = await waitUntil(
        () => get(`${url}/archive/status`),
        ({ body }) => body.pending_count === 2 || Number(body.chunks_uploaded) > chunks,
      );
      expect(stored.status).toBe(200);
    }

    async function objects(): Promise<Array<{ key: string; seal: string | undefined }>> {
      const found = [];
      for await (const object of system.archive.list('')) {
        found.push({ key: object.key, seal: sealOf(await system.archive.get(object.key)) });
      }
      return found;
    }

    it('then each phase of a key being added, lost, rotated and retired behaves as the operator expects', async () => {
      // A: no key.
      let phase = await system.start({});
      await addItems(phase.url, 2020);
      await archiveNow(phase.url, true);
      await phase.stop();

      // B: a key is added; the 2021 items are sealed with it.
      phase = await system.start({ ARCHIVE_ENCRYPTION_KEY: K1 });
      await addItems(phase.url, 2021);
      await archiveNow(phase.url, false);
      expect(new Set((await objects()).map((o) => o.seal))).toEqual(new Set(['plain', id(K1)]));
      expect((await post(`${phase.url}/archive/configure`, { enabled: false })).status).toBe(200);
      const restored2021 = await post(`${phase.url}/archive/restore`, day(2021));
      expect(restored2021).toMatchObject({
        status: 200,
        body: { restored: 2, unreadable: [], unreadable_count: 0 },
      });
      const restored2020 = await post(`${phase.url}/archive/restore`, day(2020));
      expect(restored2020).toMatchObject({ status: 200, body: { restored: 2, unreadable: [] } });
      await phase.stop();

      // C: the key is lost: the start is refused, naming the manifest it cannot open.
      const manifest2021 = (await objects()).find(
        (o) => o.key.startsWith('manifests/2021/') && o.seal === id(K1),
      )!.key;
      const refusal = await system.refusedStart({});
      expect(refusal).toContain(
        `the archive holds 1 manifest that none of the configured keys opens (their chunks and media files neither): ${manifest2021} (sealed with key ${id(K1)}, not among ARCHIVE_ENCRYPTION_KEYS)`,
      );
      expect(refusal).toContain('ARCHIVE_ALLOW_UNREADABLE=true');

      // D: told to go on: a restore names what it cannot read, and reads nothing it need not.
      phase = await system.start({ ARCHIVE_ALLOW_UNREADABLE: 'true' });
      const unreadable = await post(`${phase.url}/archive/restore`, day(2021));
      expect(unreadable.status).toBe(200);
      expect(unreadable.body).toMatchObject({
        success: true,
        restored: 0,
        unreadable_count: 1,
        unreadable: [
          {
            key: manifest2021,
            reason: `archive object ${manifest2021} is sealed with key ${id(K1)}, which is not among ARCHIVE_ENCRYPTION_KEYS`,
          },
        ],
      });
      expect(String(unreadable.body.message)).toMatch(
        /items restored; 1 archived object could not be read/,
      );
      expect((await get(`${phase.url}/archive/status`)).body.last_error).toContain(manifest2021);
      expect(await post(`${phase.url}/archive/restore`, day(2020))).toMatchObject({
        status: 200,
        body: { unreadable: [], unreadable_count: 0 },
      });
      await phase.stop();

      // E: rotation: K2 is the newest key, K1 still listed for reading; the rekey seals everything
      // with K2 and removes what it replaced.
      const before = await objects();
      const rekey = await system.rekey({ ARCHIVE_ENCRYPTION_KEYS: `${K2},${K1}` });
      expect(rekey.code).toBe(0);
      expect(JSON.parse(rekey.stdout)).toMatchObject({
        key: id(K2),
        rekeyed: 2,
        current: 0,
        unreadable: [],
        sealedWith: [id(K2)],
      });
      const after = await objects();
      expect(after.map((o) => o.seal)).toEqual(after.map(() => id(K2)));
      expect(after.filter((o) => o.key.startsWith('manifests/')).map((o) => o.key)).toEqual(
        before.filter((o) => o.key.startsWith('manifests/')).map((o) => o.key),
      );
      expect(after).toHaveLength(before.length);
      expect(after.filter((o) => before.some((b) => b.key === o.key))).toHaveLength(2); // manifests
      const again = await system.rekey({ ARCHIVE_ENCRYPTION_KEYS: `${K2},${K1}` });
      expect(JSON.parse(again.stdout)).toMatchObject({ rekeyed: 0, current: 2 });

      // F: K1 retired: the start is not refused, and every range opens with K2 alone.
      phase = await system.start({ ARCHIVE_ENCRYPTION_KEYS: K2 });
      let stored = 0;
      for await (const object of system.archive.list('')) stored += object.size;
      expect((await get(`${phase.url}/archive/status`)).body.storage_used).toBe(stored);
      for (const year of [2020, 2021]) {
        expect(await post(`${phase.url}/archive/restore`, day(year))).toMatchObject({
          status: 200,
          body: { unreadable: [], unreadable_count: 0 },
        });
      }
      await phase.stop();
    });
  },
);
