/**
 * `npm run archive:rekey` killed part way: the objects it has sealed anew need the new key, so
 * the archive state names that key (sealed_with) before the first of them is written. A worker
 * started without it is then refused at once, naming what it cannot open, instead of starting
 * and finding out at a restore; running the rekey again finishes the rotation.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { archiveKeyId, archiveKeyring, createArchiver, sealOf } from '@screenfleet/archive-worker';
import { isolatedBroker, mongoUrl, s3Settings } from '../../../test/services';
import { startService, type ServiceProcess } from '../../../test/support/processes';
import {
  allItems,
  archivedKeys,
  byId,
  item,
  openStores,
  settings,
  waitUntil,
  workerFor,
  type Stores,
} from './support';

const rekeyCli = path.resolve(__dirname, '../dist/entry/rekey-cli.js');
const K1 = 'a1'.repeat(32);
const K2 = 'b2'.repeat(32);
const key = (hex: string) => Buffer.from(hex, 'hex');
const id = (hex: string) => archiveKeyId(key(hex));
/** Many small chunks: the rekey is still far from done when the test has seen it begin. */
const ITEMS = 100;
const CHUNK_SIZE = 2;

describe('archive:rekey killed part way', () => {
  let s: Stores;
  let broker: { url: string; remove(): Promise<void> };
  const children: ChildProcess[] = [];
  const services: ServiceProcess[] = [];

  beforeEach(async () => {
    broker = await isolatedBroker();
    s = await openStores('s3');
  });
  afterEach(async () => {
    for (const child of children.splice(0)) child.kill('SIGKILL');
    for (const service of services.splice(0)) await service.stop('SIGKILL');
    await s.close();
    await broker.remove();
  });

  /** What the rekey CLI and the worker process need to reach this test's stores. */
  function storesEnv(): Record<string, string> {
    const given = s3Settings();
    return {
      PATH: process.env.PATH ?? '',
      MONGODB_URL: mongoUrl(),
      MONGODB_DATABASE: s.database,
      ARCHIVE_STORE: 's3',
      S3_ENDPOINT: given.endpoint,
      S3_REGION: given.region,
      S3_BUCKET: s.s3!.bucket,
      S3_PREFIX: s.s3!.prefix,
      S3_ACCESS_KEY: given.credentials.accessKeyId,
      S3_SECRET_KEY: given.credentials.secretAccessKey,
      S3_FORCE_PATH_STYLE: String(given.forcePathStyle),
      // The killed rekey's task lease expires soon: the second run need not wait long for it.
      ARCHIVE_LEASE_TTL: '1500ms',
    };
  }

  /** The compiled rekey CLI with `keys`; `ended` resolves once it has exited and printed. */
  function rekey(keys: string) {
    const child = spawn(process.execPath, [rekeyCli], {
      env: { ...storesEnv(), ARCHIVE_ENCRYPTION_KEYS: keys },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    children.push(child);
    let stdout = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    const ended = new Promise<{ code: number | null; signal: string | null; stdout: string }>(
      (resolve) => child.once('close', (code, signal) => resolve({ code, signal, stdout })),
    );
    return { child, ended };
  }

  async function manifestSeals(): Promise<Array<{ key: string; seal: string | undefined }>> {
    const seals = [];
    for (const manifest of await archivedKeys(s.archive, 'manifests/')) {
      seals.push({ key: manifest, seal: sealOf(await s.archive.get(manifest)) });
    }
    return seals;
  }

  it('when the rekey to a new key is killed after some manifests, then sealed_with names both keys, a worker without the new key is refused naming what it cannot open, and a second run finishes so that the new key alone restores every item', async () => {
    const olds = Array.from({ length: ITEMS }, (_, i) => item(30 - i / 1000));
    await s.content.insertItems(olds);
    await createArchiver({
      content: s.content,
      archive: s.archive,
      state: s.state,
      chunkSize: CHUNK_SIZE,
      defaults: settings(),
      keyring: archiveKeyring([key(K1)]),
    }).runPass();
    expect(await allItems(s.content)).toEqual([]);
    const manifests = await archivedKeys(s.archive, 'manifests/');
    expect(manifests).toHaveLength(ITEMS / CHUNK_SIZE);
    expect((await s.state.load(undefined as never)).sealed_with).toEqual([id(K1)]);

    // The rekey goes through the manifests in the store's (sorted) order: killed once the first
    // one is sealed with K2.
    const first = [...manifests].sort()[0]!;
    const interrupted = rekey(`${K2},${K1}`);
    const firstSeal = await waitUntil(
      async () => sealOf(await s.archive.get(first)),
      (seal) => seal === id(K2),
    );
    expect(firstSeal).toBe(id(K2));
    interrupted.child.kill('SIGKILL');
    expect(await interrupted.ended).toMatchObject({ code: null, signal: 'SIGKILL' });
    const resealed = (await manifestSeals()).filter((manifest) => manifest.seal === id(K2));
    expect(resealed.length).toBeGreaterThan(0);
    expect(resealed.length).toBeLessThan(manifests.length); // it really was cut short

    // (a) The state names the new key beside the old.
    expect([...((await s.state.load(undefined as never)).sealed_with ?? [])].sort()).toEqual(
      [id(K1), id(K2)].sort(),
    );

    // (b) A worker with K1 alone is refused at start, naming the manifests only K2 opens.
    const worker = startService('archive-worker', {
      ...storesEnv(),
      RABBITMQ_URL: broker.url,
      ARCHIVE_OPS_PORT: '0',
      ARCHIVE_ENCRYPTION_KEYS: K1,
    });
    services.push(worker);
    expect(await worker.exited(20_000)).toBe(1);
    const count = resealed.length;
    expect(JSON.stringify(worker.lines)).toContain(
      `the archive holds ${count} manifest${count === 1 ? '' : 's'} that none of the configured keys opens (their chunks and media files neither): ${resealed[0]!.key} (sealed with key ${id(K2)}, not among ARCHIVE_ENCRYPTION_KEYS)`,
    );

    // (c) Run again, it finishes; K2 alone then starts and restores every item.
    const finished = await rekey(`${K2},${K1}`).ended;
    expect(finished.code).toBe(0);
    const report = JSON.parse(finished.stdout) as Record<string, unknown>;
    expect(report).toMatchObject({ key: id(K2), unreadable: [], sealedWith: [id(K2)] });
    expect(Number(report.rekeyed) + Number(report.current)).toBe(manifests.length);
    expect((await manifestSeals()).filter((m) => m.seal !== id(K2))).toEqual([]);
    expect((await s.state.load(undefined as never)).sealed_with).toEqual([id(K2)]);

    const k2Only = workerFor(s, {
      keyring: archiveKeyring([key(K2)]),
      chunkSize: CHUNK_SIZE,
    });
    await k2Only.start();
    try {
      await k2Only.execute({ action: 'configure', request: { enabled: false } });
      const restored = await k2Only.execute({
        action: 'restore',
        request: { from: new Date(0).toISOString(), to: new Date().toISOString() },
      });
      expect(restored).toMatchObject({ restored: ITEMS, unreadable: [], unreadable_count: 0 });
    } finally {
      await k2Only.stop();
    }
    expect(byId(await allItems(s.content))).toEqual(byId(olds));
  });
});
