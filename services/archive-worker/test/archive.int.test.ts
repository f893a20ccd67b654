import { PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { createHash } from 'node:crypto';
import { randomBytes } from 'node:crypto';
import {
  archiveKeyring,
  createArchiver,
  openKeysFor,
  restoreRange,
  type PassStep,
} from '@screenfleet/archive-worker';
import { canStopS3, s3Settings, startMinio, stopMinio } from '../../../test/services';
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

const opened: Stores[] = [];
async function stores(kind: 's3' | 'fs' = 's3') {
  const s = await openStores(kind);
  opened.push(s);
  return s;
}
afterEach(async () => {
  for (const s of opened.splice(0)) await s.close();
});

function archiverFor(s: Stores, extra: Partial<Parameters<typeof createArchiver>[0]> = {}) {
  return createArchiver({
    content: s.content,
    archive: s.archive,
    state: s.state,
    chunkSize: 5,
    defaults: settings(),
    ...extra,
  });
}

const everything = { from: new Date(0), to: new Date('2200-01-01T00:00:00Z') };

describe('archive worker against FerretDB and MinIO', () => {
  it('when items are older than the retention, then they end up in the store and out of the content store, newer ones stay; a restore gives them back exactly', async () => {
    const s = await stores();
    const olds = Array.from({ length: 12 }, (_, i) => item(30 - i / 10));
    const news = [item(1), item(0.5)];
    await s.content.insertItems([...olds, ...news]);
    const key = randomBytes(32);

    const report = await archiverFor(s, { keyring: archiveKeyring([key]) }).runPass();

    expect(report).toMatchObject({ outcome: 'done', chunks: 3, items: 12 });
    expect(byId(await allItems(s.content))).toEqual(byId(news));
    expect(await archivedKeys(s.archive, 'chunks/')).toHaveLength(3);
    const state = await s.state.load(undefined as never);
    expect(state.counters).toEqual({
      chunks_uploaded: 3,
      items_archived: 12,
      media_files_uploaded: 0,
    });
    expect(state.watermark?.id).toBe(olds[11]!._id);
    expect(state.storage_used).toBeGreaterThan(0);

    const restored = await restoreRange(
      { archive: s.archive, content: s.content, keys: openKeysFor(archiveKeyring([key])) },
      everything,
    );

    expect(restored).toMatchObject({ restored: 12, alreadyStored: 0 });
    expect(byId(await allItems(s.content))).toEqual(byId([...olds, ...news]));
  });

  it('when many items share one timestamp across chunk borders, then each is archived exactly once', async () => {
    const s = await stores();
    const first = item(20);
    const same = [
      first,
      ...Array.from({ length: 11 }, () => item(20, { timestamp: first.timestamp })),
    ];
    await s.content.insertItems(same);

    await archiverFor(s).runPass();

    expect(await allItems(s.content)).toEqual([]);
    const restored = await restoreRange({ archive: s.archive, content: s.content }, everything);
    expect(restored).toMatchObject({ chunks: 3, restored: 12, alreadyStored: 0 });
    expect(byId(await allItems(s.content))).toEqual(byId(same));
  });

  it.each<PassStep>(['uploaded', 'deleted'])(
    'when the worker dies right after "%s" (between upload and delete, between delete and state save), then nothing is lost or duplicated',
    async (crashAt) => {
      const s = await stores();
      const olds = Array.from({ length: 13 }, (_, i) => item(30 - i / 10));
      await s.content.insertItems(olds);
      let crashed = false;
      const dying = archiverFor(s, {
        onStep: (step) => {
          if (step !== crashAt || crashed) return Promise.resolve();
          crashed = true;
          return new Promise<never>(() => undefined); // the process is gone: nothing more runs
        },
      });
      void dying.runPass();
      await waitUntil(() => Promise.resolve(crashed), Boolean);
      expect(crashed).toBe(true);
      if (crashAt === 'uploaded') expect(await allItems(s.content)).toHaveLength(13);

      const report = await archiverFor(s).runPass();

      expect(report.outcome).toBe('done');
      expect(await allItems(s.content)).toEqual([]);
      const state = await s.state.load(undefined as never);
      expect(state.counters.items_archived).toBe(13);
      expect(state.counters.chunks_uploaded).toBe(3);
      expect(state.cleanup_pending).toBeNull();
      expect(await archivedKeys(s.archive, 'chunks/')).toHaveLength(3);
      const restored = await restoreRange({ archive: s.archive, content: s.content }, everything);
      expect(restored).toMatchObject({ restored: 13, alreadyStored: 0 });
      expect(byId(await allItems(s.content))).toEqual(byId(olds));
    },
  );

  it('when the next chunk would pass the storage limit, then uploading stops with a clear last_error and nothing more is deleted', async () => {
    const s = await stores();
    await s.content.insertItems(Array.from({ length: 10 }, (_, i) => item(30 - i / 10)));
    const probe = await stores();
    await probe.content.insertItems(Array.from({ length: 5 }, (_, i) => item(30 - i / 10)));
    await archiverFor(probe).runPass();
    const oneChunk = (await probe.state.load(undefined as never)).storage_used;

    const report = await archiverFor(s, {
      defaults: settings({ storage_limit: Math.round(oneChunk * 1.5) }),
    }).runPass();

    expect(report.outcome).toBe('storage_limit');
    const state = await s.state.load(undefined as never);
    expect(state.last_error).toMatch(
      /^storage limit reached: \d+ of \d+ bytes used and the next chunk needs \d+/,
    );
    expect(state.failures).toBe(0);
    expect(await allItems(s.content)).toHaveLength(5);
    expect(await archivedKeys(s.archive, 'chunks/')).toHaveLength(1);
  });

  it('when an archived object is tampered with, then the restore names it, inserts nothing from it and restores the rest', async () => {
    const s = await stores();
    const [a, b] = [
      [item(20), item(20.1)],
      [item(19), item(19.1)],
    ];
    await s.content.insertItems([...a, ...b]);
    await archiverFor(s, { chunkSize: 2 }).runPass();
    const [chunkKey] = await archivedKeys(s.archive, 'chunks/'); // the chunk of a, the older
    const body = await s.archive.get(chunkKey!);
    body[body.length - 5] = body[body.length - 5]! ^ 0xff;
    // Behind the store's back, with a checksum that matches the new bytes: only the manifest knows.
    const raw = new S3Client({ ...s3Settings(), maxAttempts: 1 });
    await raw.send(
      new PutObjectCommand({
        Bucket: s.s3!.bucket,
        Key: `${s.s3!.prefix}/${chunkKey!}`,
        Body: body,
        ChecksumSHA256: createHash('sha256').update(body).digest('base64'),
      }),
    );
    raw.destroy();

    const report = await restoreRange({ archive: s.archive, content: s.content }, everything);

    expect(report).toMatchObject({ restored: 2, chunks: 1 });
    expect(report.unreadable).toEqual([
      {
        key: chunkKey,
        reason: `archive object ${chunkKey!} does not match its recorded SHA-256 (tampered or truncated)`,
      },
    ]);
    expect(byId(await allItems(s.content))).toEqual(byId(b));
  });

  it('when an upload is in progress, then status says is_uploading', async () => {
    const s = await stores();
    await s.content.insertItems([item(20), item(21)]);
    let release: () => void = () => undefined;
    let paused = false;
    const worker = workerFor(s, {
      onStep: (step) => {
        if (step !== 'uploaded') return Promise.resolve();
        paused = true;
        return new Promise<void>((resolve) => (release = resolve));
      },
    });
    // Not started: it holds no lease and answers from the shared state.
    await expect(workerFor(s).status()).resolves.toMatchObject({
      is_uploading: false,
      pending_count: 2,
    });

    await worker.start();
    await waitUntil(() => Promise.resolve(paused), Boolean);
    const during = await worker.status();
    const other = await workerFor(s).status(); // another worker answers from the shared state
    release();
    await worker.stop();

    expect(during).toMatchObject({ is_uploading: true, pending_count: 2 });
    expect(other).toMatchObject({ is_uploading: true });
    await expect(worker.status()).resolves.toMatchObject({ is_uploading: false, pending_count: 0 });
  });

  it('when two workers run, then only the lease holder uploads, and each chunk is uploaded once', async () => {
    const s = await stores();
    await s.content.insertItems(Array.from({ length: 20 }, (_, i) => item(30 - i / 10)));
    const uploads = { a: 0, b: 0 };
    const a = workerFor(s, {
      onStep: (step) => Promise.resolve(void (step === 'uploaded' && uploads.a++)),
    });
    const b = workerFor(s, {
      onStep: (step) => Promise.resolve(void (step === 'uploaded' && uploads.b++)),
    });
    await Promise.all([a.start(), b.start()]);

    await waitUntil(
      () => allItems(s.content),
      (docs) => docs.length === 0,
    );
    await Promise.all([a.stop(), b.stop()]);

    expect(uploads.a + uploads.b).toBe(4);
    expect(Math.min(uploads.a, uploads.b)).toBe(0);
    expect(await archivedKeys(s.archive, 'chunks/')).toHaveLength(4);
    expect((await s.state.load(undefined as never)).counters.items_archived).toBe(20);
  });

  (canStopS3() ? it : it.skip)(
    'when MinIO is stopped mid-run, then last_error is set, passes back off and nothing is deleted; when it returns, the archive catches up',
    async () => {
      const s = await stores();
      await s.content.insertItems(Array.from({ length: 15 }, (_, i) => item(30 - i / 10)));
      let stopped = false;
      const worker = workerFor(s, {
        retry: { initialMs: 300, maxMs: 1200 },
        onStep: async (step) => {
          if (step === 'deleted' && !stopped) {
            stopped = true;
            await stopMinio();
          }
        },
      });
      try {
        await worker.start();
        const failing = await waitUntil(
          () => s.state.load(undefined as never),
          (state) => state.failures >= 3,
        );
        expect(failing.last_error).toMatch(/unavailable|ECONNREFUSED|connect/i);
        expect(await allItems(s.content)).toHaveLength(10); // only the verified first chunk went
        const status = await worker.status();
        expect(status).toMatchObject({ chunks_uploaded: 1, pending_count: 10 });
        expect(status.last_error).toBe(failing.last_error);
      } finally {
        if (stopped) await startMinio();
      }
      await worker.execute({ action: 'run' });
      const done = await waitUntil(
        () => allItems(s.content),
        (docs) => docs.length === 0,
        30_000,
      );
      await worker.stop();

      expect(done).toEqual([]);
      const state = await s.state.load(undefined as never);
      expect(state).toMatchObject({ last_error: null, failures: 0 });
      expect(state.counters.items_archived).toBe(15);
    },
  );
});
