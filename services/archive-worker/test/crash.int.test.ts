import { archiveKeyring, openKeysFor, restoreRange } from '@screenfleet/archive-worker';
import { isolatedBroker, mongoUrl, s3Settings } from '../../../test/services';
import { startService, type ServiceProcess } from '../../../test/support/processes';
import { allItems, archivedKeys, byId, item, openStores, waitUntil, type Stores } from './support';

describe('archive worker process killed with SIGKILL mid-pass', () => {
  let broker: { url: string; remove(): Promise<void> };
  let s: Stores;
  const processes: ServiceProcess[] = [];

  beforeEach(async () => {
    broker = await isolatedBroker();
    s = await openStores('s3');
  });

  afterEach(async () => {
    for (const p of processes.splice(0)) await p.stop('SIGKILL');
    await s.close();
    await broker.remove();
  });

  function start(): ServiceProcess {
    const s3 = s3Settings();
    const p = startService('archive-worker', {
      RABBITMQ_URL: broker.url,
      MONGODB_URL: mongoUrl(),
      MONGODB_DATABASE: s.database,
      ARCHIVE_ENABLED: 'true',
      ARCHIVE_RETENTION_DAYS: '7',
      ARCHIVE_STORE: 's3',
      S3_ENDPOINT: s3.endpoint,
      S3_REGION: s3.region,
      S3_BUCKET: s.s3!.bucket,
      S3_PREFIX: s.s3!.prefix,
      S3_ACCESS_KEY: s3.credentials.accessKeyId,
      S3_SECRET_KEY: s3.credentials.secretAccessKey,
      S3_FORCE_PATH_STYLE: String(s3.forcePathStyle),
      ARCHIVE_CHUNK_SIZE: '10',
      ARCHIVE_LEASE_TTL: '1500ms',
      ARCHIVE_OPS_PORT: '0',
      ARCHIVE_ENCRYPTION_KEY: 'ab'.repeat(32),
    });
    processes.push(p);
    return p;
  }

  it('when the worker is killed during a pass and started again, then every item is archived exactly once and restores exactly', async () => {
    const olds = Array.from({ length: 300 }, (_, i) => item(30 - i / 1000));
    const news = [item(1), item(2)];
    await s.content.insertItems([...olds, ...news]);

    const first = start();
    await first.waitForLog(/archive worker started/);
    // Kill it in the middle of the pass: some chunks are done, most are not.
    await waitUntil(
      () => s.content.countRange({ to: new Date('2200-01-01T00:00:00Z') }),
      (count) => count < 250,
    );
    await first.stop('SIGKILL');
    const left = (await allItems(s.content)).length;
    expect(left).toBeGreaterThan(news.length);

    const second = start();
    await second.waitForLog(/archive worker started/);
    const state = await waitUntil(
      () => s.state.load(undefined as never),
      (st) => st.last_cleanup !== null && st.cleanup_pending === null,
      40_000,
    );
    await second.stop('SIGTERM');

    expect(byId(await allItems(s.content))).toEqual(byId(news));
    expect(state.counters.items_archived).toBe(300);
    expect(state.counters.chunks_uploaded).toBe(30);
    const chunkKeys = await archivedKeys(s.archive, 'chunks/');
    const itemSets = new Set(chunkKeys.map((k) => k.replace(/-[0-9a-f]{64}\.jsonl\.gz\.sfa$/, '')));
    expect(itemSets.size).toBe(30);
    // A kill between upload and record left a copy (a fresh IV: other bytes, another key): the
    // second worker's sweep at takeover removed it when no manifest named it, or its re-upload
    // did when it replaced the manifest naming it (issue 28, item 5).
    expect(chunkKeys).toHaveLength(30);
    expect(await archivedKeys(s.archive, 'manifests/')).toHaveLength(30);
    // The second worker counted what the store holds when it took the lease, copies included.
    let stored = 0;
    for await (const object of s.archive.list('')) stored += object.size;
    expect(state.storage_used).toBe(stored);
    const report = await restoreRange(
      {
        archive: s.archive,
        content: s.content,
        keys: openKeysFor(archiveKeyring([Buffer.from('ab'.repeat(32), 'hex')])),
      },
      { from: new Date(0), to: new Date(Date.now() - 7 * 86_400_000) },
    );
    expect(report).toMatchObject({ restored: 300, alreadyStored: 0 });
    expect(byId(await allItems(s.content))).toEqual(byId([...olds, ...news]));
  });
});
