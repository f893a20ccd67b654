/**
 * The archive end to end, through HTTP only: POST /add -> RabbitMQ -> ingest worker -> FerretDB,
 * then /archive/* -> gateway -> archive.rpc -> the archive worker's main (S3 adapter against the
 * test MinIO, media root in a temp dir) -> MinIO and back. All real, on a vhost of its own.
 * The steps run in order and build on each other, as a user's session would.
 */
import {
  DeleteBucketCommand,
  DeleteObjectsCommand,
  ListObjectsV2Command,
  S3Client,
} from '@aws-sdk/client-s3';
import {
  existsSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { MongoClient, type Collection, type Document } from 'mongodb';
import {
  databaseName,
  isolatedBroker,
  mongoUrl,
  s3BucketName,
  s3Settings,
  uniqueName,
} from './services';
import { waitUntil } from '../services/archive-worker/test/support';
import { waitForCount } from './support/store';
import { get, post, startGateway, type RunningGateway } from './support/gateway';
import { startService, type ServiceProcess } from './support/processes';
import { numberFields, statusFields } from './support/archive-status';

const DAY_MS = 86_400_000;
const ARCHIVE_TIMEOUT_MS = 2000;
const DEVICE = 'e2e-archive';
const STORAGE_LIMIT = 10_000_000_000;

/** The spec's timestamp form: YYYY-MM-DDThh:mm:ssZ. */
const wire = (ms: number) =>
  new Date(Math.floor(ms / 1000) * 1000).toISOString().replace('.000Z', 'Z');

describe('archive end to end through the gateway', () => {
  let broker: { url: string; remove(): Promise<void> };
  let gateway: RunningGateway;
  let ingest: ServiceProcess;
  let archiver: ServiceProcess | undefined;
  let client: MongoClient;
  let items: Collection<Document>;
  let s3: S3Client;
  const database = databaseName('e2e_archive');
  const given = s3Settings();
  const bucket = given.bucket ?? s3BucketName('sf-e2e');
  const prefix = given.bucket ? uniqueName('e2e-archive') : 'archive';
  const mediaRoot = realpathSync(mkdtempSync(path.join(tmpdir(), 'sf-e2e-media-')));
  const outside = realpathSync(mkdtempSync(path.join(tmpdir(), 'sf-e2e-outside-')));

  const start = Date.now();
  const oldAt = (i: number) => wire(start - 40 * DAY_MS + i * 1000);
  const mediaFiles = [0, 1, 2].map((i) => path.join(mediaRoot, `monitor_1_${i}.mp4`));
  const outsideFile = path.join(outside, 'monitor_2.mp4');
  const oldItems = [
    ...mediaFiles.map((file, i) => ({ file_path: file, timestamp: oldAt(i) })),
    { file_path: outsideFile, timestamp: oldAt(3) },
    { file_path: '/captures/never-existed.mp4', timestamp: oldAt(4) },
    { file_path: path.join(mediaRoot, 'gone-already.mp4'), timestamp: oldAt(5) },
    { file_path: 'relative/frame.png', timestamp: oldAt(6) },
  ].map((fields, i) => ({
    ...fields,
    app_name: 'Code',
    window_name: `old-${i}.ts - screenfleet`,
    ocr_results: [{ text: `old text ${i}`, confidence: 0.5 + i / 100 }],
    tags: ['work', `old-${i}`],
  }));
  const newItems = [0, 1, 2].map((i) => ({
    file_path: path.join(mediaRoot, `recent_${i}.mp4`),
    timestamp: wire(start - (10 - i) * 1000),
    app_name: 'Firefox',
    window_name: `new-${i}`,
    ocr_results: [{ text: `new text ${i}`, confidence: 0.9 }],
    tags: ['recent'],
  }));
  /** The content store's documents of the device before anything was archived, by _id. */
  let originals: Document[] = [];

  const status = () => get(`${gateway.url}/archive/status?timezone=utc`);
  // As stored, search fields included; not `batch`, the message that stored an item (how its
  // counts were kept: a restore is a write of its own).
  const stored = () =>
    items
      .find({ device_name: DEVICE }, { projection: { batch: 0 } })
      .sort({ _id: 1 })
      .toArray();

  /** The status once `done` holds (or the last one, when it never did). */
  const waitForStatus = (done: (body: Record<string, unknown>) => boolean, timeoutMs = 30_000) =>
    waitUntil(status, (last) => last.status === 200 && done(last.body), timeoutMs);

  async function listObjects(): Promise<Array<{ key: string; size: number }>> {
    const objects: Array<{ key: string; size: number }> = [];
    let token: string | undefined;
    do {
      const page = await s3.send(
        new ListObjectsV2Command({
          Bucket: bucket,
          Prefix: `${prefix}/`,
          ContinuationToken: token,
        }),
      );
      for (const object of page.Contents ?? [])
        objects.push({ key: object.Key!, size: object.Size! });
      token = page.NextContinuationToken;
    } while (token);
    return objects;
  }

  beforeAll(async () => {
    for (const [i, file] of mediaFiles.entries())
      writeFileSync(file, `frame bytes ${i} `.repeat(100 + i));
    writeFileSync(outsideFile, 'outside the media root');
    for (const item of newItems) writeFileSync(item.file_path, `recent ${item.window_name}`);

    broker = await isolatedBroker();
    gateway = await startGateway(broker.url, { archiveTimeoutMs: ARCHIVE_TIMEOUT_MS });
    ingest = startService('ingest-worker', {
      RABBITMQ_URL: broker.url,
      MONGODB_URL: mongoUrl(),
      MONGODB_DATABASE: database,
      INGEST_OPS_PORT: '0',
    });
    archiver = startService('archive-worker', {
      RABBITMQ_URL: broker.url,
      MONGODB_URL: mongoUrl(),
      MONGODB_DATABASE: database,
      ARCHIVE_OPS_PORT: '0',
      ARCHIVE_RETENTION_DAYS: '1',
      // Disabled until the test turns it on; passes run every hour, so only POST /archive/run
      // can make the one this test waits for.
      ARCHIVE_ENABLED: 'false',
      ARCHIVE_INTERVAL: '1h',
      ARCHIVE_LEASE_TTL: '3s',
      ARCHIVE_CHUNK_SIZE: '3',
      ARCHIVE_STORAGE_LIMIT: String(STORAGE_LIMIT),
      ARCHIVE_MEDIA_ROOT: mediaRoot,
      ARCHIVE_STORE: 's3',
      S3_ENDPOINT: given.endpoint,
      S3_REGION: given.region,
      S3_BUCKET: bucket,
      S3_PREFIX: prefix,
      S3_ACCESS_KEY: given.credentials.accessKeyId,
      S3_SECRET_KEY: given.credentials.secretAccessKey,
      S3_FORCE_PATH_STYLE: String(given.forcePathStyle),
    });
    await ingest.waitForLog(/consuming content batches/);
    await archiver.waitForLog(/archive worker started/);
    client = await MongoClient.connect(mongoUrl());
    items = client.db(database).collection('content_items');
    s3 = new S3Client({ ...given, maxAttempts: 1 });
  });

  afterAll(async () => {
    await archiver?.stop();
    await ingest?.stop();
    await gateway?.close();
    await client?.db(database).dropDatabase();
    await client?.close();
    await broker?.remove();
    if (s3) {
      const keys = (await listObjects()).map(({ key }) => ({ Key: key }));
      if (keys.length > 0) {
        await s3.send(new DeleteObjectsCommand({ Bucket: bucket, Delete: { Objects: keys } }));
      }
      if (!given.bucket) await s3.send(new DeleteBucketCommand({ Bucket: bucket }));
      s3.destroy();
    }
    rmSync(mediaRoot, { recursive: true, force: true });
    rmSync(outside, { recursive: true, force: true });
  });

  it('when old and new items are posted, then GET /archive/status answers every field, numbers as numbers, the old items pending', async () => {
    const old = await post(`${gateway.url}/add`, {
      device_name: DEVICE,
      content: { content_type: 'frames', data: oldItems },
    });
    const recent = await post(`${gateway.url}/add`, {
      device_name: DEVICE,
      content: { content_type: 'frames', data: newItems },
    });
    expect([old.status, recent.status]).toEqual([200, 200]);
    const total = oldItems.length + newItems.length;
    expect(await waitForCount(items, { device_name: DEVICE }, total)).toBe(total);
    originals = await stored();

    const response = await status();

    expect(response.status).toBe(200);
    expect(Object.keys(response.body).sort()).toEqual([...statusFields].sort());
    for (const field of numberFields) expect(typeof response.body[field]).toBe('number');
    expect(response.body).toEqual({
      enabled: false,
      retention_days: 1,
      watermark: null,
      last_cleanup: null,
      last_error: null,
      storage_used: 0,
      storage_limit: STORAGE_LIMIT,
      pending_count: oldItems.length,
      is_uploading: false,
      chunks_uploaded: 0,
      media_files_uploaded: 0,
      media_files_pending: 0,
    });
  });

  it('when the archive is enabled and run, then the old items and their media move to MinIO and only the new items stay', async () => {
    const enabled = await post(`${gateway.url}/archive/configure`, { enabled: true });
    expect(enabled.status).toBe(200);
    expect(enabled.body.status).toMatchObject({ enabled: true, pending_count: oldItems.length });

    const run = await post(`${gateway.url}/archive/run`, {});
    expect(run).toMatchObject({
      status: 200,
      body: { success: true, message: 'archive run started' },
    });
    // Far sooner than the hourly interval: the run request started this pass.
    const done = await waitForStatus(
      (body) =>
        body.pending_count === 0 && body.last_cleanup !== null && body.is_uploading === false,
      20_000,
    );

    expect(done.status).toBe(200);
    const body = done.body;
    expect(Object.keys(body).sort()).toEqual([...statusFields].sort());
    for (const field of numberFields) expect(typeof body[field]).toBe('number');
    expect(body).toMatchObject({
      enabled: true,
      pending_count: 0,
      last_error: null,
      media_files_pending: 0,
    });
    // 7 items in chunks of 3.
    expect(body.chunks_uploaded).toBe(3);
    expect(body.media_files_uploaded).toBe(mediaFiles.length);
    expect(body.watermark).toBe(new Date(oldAt(oldItems.length - 1)).toISOString());
    expect(Date.parse(String(body.last_cleanup))).toBeGreaterThanOrEqual(start);
    const objects = await listObjects();
    expect(body.storage_used).toBeGreaterThan(0);
    expect(body.storage_used).toBe(objects.reduce((sum, object) => sum + object.size, 0));
    expect(objects.filter(({ key }) => key.startsWith(`${prefix}/media/`))).toHaveLength(
      mediaFiles.length,
    );
    expect(objects.filter(({ key }) => key.startsWith(`${prefix}/chunks/`))).toHaveLength(3);

    const newDocs = originals.filter((doc) => (doc.timestamp as Date).getTime() > start - DAY_MS);
    expect(newDocs).toHaveLength(newItems.length);
    expect(await stored()).toStrictEqual(newDocs);
    for (const file of mediaFiles) expect(existsSync(file)).toBe(false);
    expect(readFileSync(outsideFile, 'utf8')).toBe('outside the media root');
    for (const item of newItems) expect(existsSync(item.file_path)).toBe(true);
  });

  it('when the archive is disabled and the old range restored, then the content store holds exactly the original documents again, and a second restore adds nothing', async () => {
    const disabled = await post(`${gateway.url}/archive/configure`, { enabled: false });
    expect(disabled.status).toBe(200);
    expect(disabled.body.status).toMatchObject({ enabled: false });

    const restore = await post(`${gateway.url}/archive/restore`, {
      from: new Date(start - 41 * DAY_MS).toISOString(),
      to: new Date(start - 39 * DAY_MS).toISOString(),
    });

    expect(restore.status).toBe(200);
    expect(restore.body).toMatchObject({
      success: true,
      restored: oldItems.length,
      message: `archive restore finished: ${oldItems.length} items restored`,
    });
    expect(restore.body.status).toMatchObject({ enabled: false, pending_count: oldItems.length });
    expect(await stored()).toStrictEqual(originals);

    // Idempotent: the same range again inserts nothing and changes nothing.
    const again = await post(`${gateway.url}/archive/restore`, {
      from: new Date(start - 41 * DAY_MS).toISOString(),
      to: new Date(start - 39 * DAY_MS).toISOString(),
    });
    expect(again).toMatchObject({ status: 200, body: { restored: 0 } });
    expect(await stored()).toStrictEqual(originals);
  });

  it('when the archive is initialised twice, then the second is 409; retention_days 0 is 400 naming the field', async () => {
    // A retention no item reaches: init also starts a pass, which must not take the restored items.
    const first = await post(`${gateway.url}/archive/init`, { retention_days: 3650 });
    const second = await post(`${gateway.url}/archive/init`, { retention_days: 3650 });
    const zero = await post(`${gateway.url}/archive/configure`, { retention_days: 0 });

    expect(first.status).toBe(200);
    expect(first.body.status).toMatchObject({
      enabled: true,
      retention_days: 3650,
      pending_count: 0,
    });
    expect(second.status).toBe(409);
    expect(second.body.message).toMatch(/already initialised/);
    expect(zero.status).toBe(400);
    expect(zero.body.errors).toEqual([
      expect.objectContaining({ path: 'retention_days', rule: 'minimum' }),
    ]);
    expect((await status()).body).toMatchObject({ enabled: true, retention_days: 3650 });
  });

  it('when the archive worker is stopped, then GET /archive/status answers 503 with a reason within the timeout', async () => {
    expect(await archiver!.stop()).toBe(0);
    archiver = undefined;

    const began = Date.now();
    const response = await status();
    const elapsed = Date.now() - began;

    expect(response.status).toBe(503);
    expect(response.headers.get('retry-after')).toBe('5');
    expect(response.body.message).toBe(
      `no answer from the archive worker within ${ARCHIVE_TIMEOUT_MS} ms (is one running?)`,
    );
    expect(elapsed).toBeLessThan(ARCHIVE_TIMEOUT_MS + 500);
  });
});
