import { randomBytes } from 'node:crypto';
import type { ContentDocument } from '@screenfleet/storage';
import type { ArchiveSettings } from '@screenfleet/contracts';
import {
  buildDoc,
  memoryArchiveStore,
  memoryContentStore,
  memoryMedia,
  memoryStateStore,
} from '../../test/memory-ports';
import { createArchiveCommands } from './archive-commands';
import { createArchiver, type ArchiverDeps, type PassStep } from './archive-pass';
import { openKeysFor } from './archive-keys';
import { archiveKeyring } from './chunk-codec';
import { restoreRange } from './restore';

const now = new Date('2026-03-01T00:00:00Z');
const old = (seconds: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, seconds)); // > 7 days ago
const recent = (seconds: number) => new Date(now.getTime() - 3600_000 + seconds * 1000);
const defaults: ArchiveSettings = { enabled: true, retention_days: 7, storage_limit: 1e12 };

function setup(docs: ContentDocument[], extra: Partial<ArchiverDeps> = {}) {
  const content = memoryContentStore(docs);
  const archive = memoryArchiveStore();
  const state = memoryStateStore();
  const deps = { content, archive, state, chunkSize: 3, defaults, now: () => now, ...extra };
  return { content, archive, state, deps, archiver: createArchiver(deps) };
}

const storedBytes = (archive: ReturnType<typeof memoryArchiveStore>) =>
  [...archive.objects.values()].reduce((n, body) => n + body.length, 0);
const ids = (docs: Iterable<ContentDocument>) => [...docs].map((doc) => doc._id).sort();

describe('archive pass', () => {
  it('when items are older than the retention, then they move to the store and newer ones stay', async () => {
    const olds = [1, 2, 3, 4, 5, 6, 7].map((s) => buildDoc({ timestamp: old(s) }));
    const news = [1, 2].map((s) => buildDoc({ timestamp: recent(s) }));
    const { content, archive, state, archiver } = setup([...olds, ...news]);

    const report = await archiver.runPass();

    expect(report).toMatchObject({ outcome: 'done', chunks: 3, items: 7 });
    expect(ids(content.items.values())).toEqual(ids(news));
    expect([...archive.objects.keys()].filter((k) => k.startsWith('chunks/'))).toHaveLength(3);
    const saved = state.current()!;
    expect(saved.counters).toEqual({
      chunks_uploaded: 3,
      items_archived: 7,
      media_files_uploaded: 0,
    });
    expect(saved.watermark).toEqual({ timestamp: old(7), id: olds[6]!._id });
    expect(saved.cleanup_pending).toBeNull();
    expect(saved.last_cleanup).toEqual(now);
    expect(saved.storage_used).toBe(
      [...archive.objects.values()].reduce((n, body) => n + body.length, 0),
    );
    expect(await archiver.pendingCount(saved.settings)).toBe(0);
  });

  it('when many items share a timestamp across chunk borders, then each is archived exactly once', async () => {
    const same = Array.from({ length: 8 }, () => buildDoc({ timestamp: old(100) }));
    const { content, archive, state, archiver } = setup(structuredClone(same));

    await archiver.runPass();

    expect(content.items.size).toBe(0);
    expect(state.current()!.counters).toMatchObject({ chunks_uploaded: 3, items_archived: 8 });
    const restored = memoryContentStore();
    const report = await restoreRange(
      { archive, content: restored },
      { from: old(0), to: old(200) },
    );
    expect(report).toMatchObject({ chunks: 3, restored: 8, alreadyStored: 0 });
    expect(ids(restored.items.values())).toEqual(ids(same));
  });

  it('when objects are encrypted, then a restore without the key restores nothing of them and names the manifest, with its key id', async () => {
    const keyring = archiveKeyring([randomBytes(32)]);
    const { archive, archiver } = setup([buildDoc({ timestamp: old(1) })], { keyring });
    await archiver.runPass();
    const manifestKey = [...archive.objects.keys()].find((k) => k.startsWith('manifests/'))!;

    const report = await restoreRange(
      { archive, content: memoryContentStore() },
      { from: old(0), to: now },
    );

    expect(report).toMatchObject({ restored: 0, chunks: 0 });
    expect(report.unreadable).toEqual([
      {
        key: manifestKey,
        reason: `archive object ${manifestKey} is sealed with key ${keyring.writer!.id}, which is not among ARCHIVE_ENCRYPTION_KEYS`,
      },
    ]);
  });

  it('when a manifest is damaged, or replaced by an unencrypted one in an archive that holds no plain objects, then the restore names it as unreadable and restores the rest', async () => {
    const key = randomBytes(32);
    const docs = [1, 2, 3, 4].map((s) => buildDoc({ timestamp: old(s) }));
    const { archive, archiver } = setup(docs, { keyring: archiveKeyring([key]) });
    await archiver.runPass(); // chunks of 3 and 1
    const [first, second] = [...archive.objects.keys()].filter((k) => k.startsWith('manifests/'));
    const plain = setup([docs[0]!]);
    await plain.archiver.runPass();
    const plainManifest = [...plain.archive.objects.entries()].find(([k]) =>
      k.startsWith('manifests/'),
    )![1];
    const restore = (acceptPlain: boolean) =>
      restoreRange(
        {
          archive,
          content: memoryContentStore(),
          keys: { readers: archiveKeyring([key]).readers, acceptPlain },
        },
        { from: old(0), to: now },
      );

    // The state says every object is encrypted: a plain manifest is forged or downgraded.
    const original = archive.objects.get(first!)!;
    archive.objects.set(first!, plainManifest);
    const forged = await restore(false);
    expect(forged.restored).toBe(1);
    expect(forged.unreadable).toEqual([
      {
        key: first,
        reason: expect.stringContaining(
          'is not encrypted, but this archive holds no plain objects',
        ),
      },
    ]);
    // A cut-off manifest is an unreadable object too, not a raw SyntaxError.
    archive.objects.set(first!, original);
    const sealed = archive.objects.get(second!)!;
    archive.objects.set(second!, sealed.subarray(0, sealed.length - 5));
    const damaged = await restore(true);
    expect(damaged.restored).toBe(3);
    expect(damaged.unreadable.map((u) => u.key)).toEqual([second]);
    expect(damaged.unreadable[0]!.reason).toMatch(/fails decryption with its key/);
  });

  it('when archived and restored, then exactly the original documents come back', async () => {
    const key = randomBytes(32);
    const docs = [
      ...Array.from({ length: 5 }, () => buildDoc({ timestamp: old(100) })),
      buildDoc({ timestamp: old(101), device_name: 'desk-2' }),
      buildDoc({ timestamp: old(102), transcription: { text: 'hello', engine: 'whisper' } }),
    ];
    const { content, archive, archiver } = setup(structuredClone(docs), {
      keyring: archiveKeyring([key]),
    });
    await archiver.runPass();
    expect(content.items.size).toBe(0);

    const report = await restoreRange(
      { archive, content, keys: openKeysFor(archiveKeyring([key])) },
      { from: old(0), to: old(200) },
    );

    expect(report).toMatchObject({ restored: 7, alreadyStored: 0 });
    expect([...content.items.values()].sort((a, b) => (a._id < b._id ? -1 : 1))).toEqual(
      [...docs].sort((a, b) => (a._id < b._id ? -1 : 1)),
    );
    const again = await restoreRange(
      { archive, content, keys: openKeysFor(archiveKeyring([key])) },
      { from: old(0), to: old(200) },
    );
    expect(again).toMatchObject({ restored: 0, alreadyStored: 7 });
  });

  it('when restoring one device and a narrower range, then only those items come back', async () => {
    const docs = [
      buildDoc({ timestamp: old(1), device_name: 'a' }),
      buildDoc({ timestamp: old(2), device_name: 'b' }),
      buildDoc({ timestamp: old(3), device_name: 'a' }),
      buildDoc({ timestamp: old(4), device_name: 'a' }),
    ];
    const { content, archive, archiver } = setup(docs);
    await archiver.runPass();

    const report = await restoreRange(
      { archive, content },
      { from: old(2), to: old(4), device: 'a' },
    );

    expect(report.restored).toBe(1);
    expect(ids(content.items.values())).toEqual([docs[2]!._id]);
  });

  it.each<PassStep>(['uploaded', 'recorded', 'deleted'])(
    'when the worker dies after "%s", then the next pass loses and duplicates nothing',
    async (crashAt) => {
      const docs = [1, 2, 3, 4, 5, 6, 7].map((s) => buildDoc({ timestamp: old(s) }));
      const { content, archive, state, deps } = setup(structuredClone(docs));
      let crashed = false;
      const dying = createArchiver({
        ...deps,
        onStep: (step) => {
          if (step === crashAt && !crashed) {
            crashed = true;
            return new Promise<never>(() => undefined); // never returns: the process is gone
          }
          return Promise.resolve();
        },
      });
      void dying.runPass();
      await waitFor(() => crashed);
      if (crashAt === 'uploaded') expect(content.items.size).toBe(7); // nothing deleted unverified

      const next = createArchiver(deps);
      await next.takeOver(); // as the loop does when it takes the lease
      const report = await next.runPass();

      expect(report.outcome).toBe('done');
      expect(content.items.size).toBe(0);
      const saved = state.current()!;
      expect(saved.counters.items_archived).toBe(7);
      expect(saved.counters.chunks_uploaded).toBe(3);
      expect(saved.cleanup_pending).toBeNull();
      const chunkKeys = [...archive.objects.keys()].filter((k) => k.startsWith('chunks/'));
      expect(chunkKeys).toHaveLength(3); // the re-upload overwrote the unrecorded copy
      expect(saved.storage_used).toBe(storedBytes(archive)); // and counted it once
      const restored = memoryContentStore();
      expect(
        (await restoreRange({ archive, content: restored }, { from: old(0), to: now })).restored,
      ).toBe(7);
      expect([...restored.items.values()].sort((a, b) => (a._id < b._id ? -1 : 1))).toEqual(docs);
    },
  );

  it('when an encrypted chunk was uploaded but not recorded, then the re-upload (a fresh IV: other bytes, another key) removes the copy its manifest named, and storage_used is what is stored', async () => {
    const docs = [1, 2, 3, 4].map((s) => buildDoc({ timestamp: old(s) }));
    const { content, archive, state, deps } = setup(docs, {
      keyring: archiveKeyring([randomBytes(32)]),
    });
    let crashed = false;
    const dying = createArchiver({
      ...deps,
      onStep: (step) => {
        if (step !== 'uploaded' || crashed) return Promise.resolve();
        crashed = true;
        return new Promise<never>(() => undefined);
      },
    });
    void dying.runPass();
    await waitFor(() => crashed);

    const next = createArchiver(deps);
    await next.takeOver();
    await next.runPass();

    expect(content.items.size).toBe(0);
    const keys = [...archive.objects.keys()];
    expect(keys.filter((k) => k.startsWith('chunks/'))).toHaveLength(2);
    expect(keys.filter((k) => k.startsWith('manifests/'))).toHaveLength(2); // overwritten
    expect(state.current()!.storage_used).toBe(storedBytes(archive));
  });

  it('when the store fails, then nothing is deleted, last_error is set and failures count up', async () => {
    const docs = [1, 2, 3, 4].map((s) => buildDoc({ timestamp: old(s) }));
    const { content, archive, state, archiver } = setup(docs);
    archive.failWith(new Error('archive store unavailable: connect ECONNREFUSED'));

    const first = await archiver.runPass();
    const second = await archiver.runPass();

    expect(first.outcome).toBe('failed');
    expect(second.outcome).toBe('failed');
    expect(content.items.size).toBe(4);
    expect(state.current()).toMatchObject({
      last_error: 'archive store unavailable: connect ECONNREFUSED',
      failures: 2,
      uploading_since: null,
    });

    archive.failWith(undefined);
    const manual = await archiver.runPass({ manual: true });
    expect(manual).toMatchObject({ outcome: 'done', items: 4 });
    expect(state.current()).toMatchObject({ last_error: null, failures: 0 });
  });

  it('when the next chunk would pass the storage limit, then uploading stops with a clear last_error', async () => {
    const docs = [1, 2, 3, 4, 5, 6].map((s) => buildDoc({ timestamp: old(s) }));
    const probe = setup(structuredClone(docs));
    await probe.archiver.runPass();
    const perRun = probe.state.current()!.storage_used;
    const limit = Math.floor(perRun * 0.75); // room for the first chunk, not the second
    const { content, archive, state, archiver } = setup(docs, {
      defaults: { ...defaults, storage_limit: limit },
    });

    const report = await archiver.runPass();
    const again = await archiver.runPass();

    expect(report.outcome).toBe('storage_limit');
    expect(again.outcome).toBe('storage_limit');
    expect(content.items.size).toBe(3);
    const saved = state.current()!;
    expect(saved.last_error).toMatch(/^storage limit reached: \d+ of \d+ bytes used/);
    expect(saved.failures).toBe(0); // not an outage: no backoff, no retry storm
    expect(saved.storage_used).toBeLessThanOrEqual(limit);
    expect([...archive.objects.keys()].filter((k) => k.startsWith('chunks/'))).toHaveLength(1);
  });

  it('when disabled, then nothing moves', async () => {
    const { content, archiver } = setup([buildDoc({ timestamp: old(1) })], {
      defaults: { ...defaults, enabled: false },
    });

    expect((await archiver.runPass()).outcome).toBe('disabled');
    expect(content.items.size).toBe(1);
  });

  it('when items name media files, then those under the root travel with the chunk and are deleted once no item names them', async () => {
    const media = memoryMedia({ '/media/v1.mp4': 'video-1', '/media/v2.mp4': 'video-2' });
    const docs = [
      buildDoc({ timestamp: old(1), file_path: '/media/v1.mp4' }),
      buildDoc({ timestamp: old(2), file_path: '/media/v1.mp4' }),
      buildDoc({ timestamp: old(3), file_path: '/etc/passwd' }),
      buildDoc({ timestamp: old(4), file_path: '/media/../etc/shadow' }),
      buildDoc({ timestamp: recent(1), file_path: '/media/v2.mp4' }),
      buildDoc({ timestamp: old(5), file_path: '/media/v2.mp4' }),
    ];
    const { content, archive, state, archiver } = setup(docs, { media });

    await archiver.runPass();

    expect([...media.contents.keys()]).toEqual(['/media/v2.mp4']); // a newer item still names it
    const mediaKeys = [...archive.objects.keys()].filter((k) => k.startsWith('media/'));
    expect(mediaKeys).toHaveLength(2);
    expect(state.current()!.counters.media_files_uploaded).toBe(2);
    expect(content.items.size).toBe(1);
  });
});

describe('archive pass, media files that fail', () => {
  it('when a media file fails to read or to delete, then the items are archived, the failure is reported and listed, and the pass is done', async () => {
    const media = memoryMedia({ '/media/bad.mp4': 'x', '/media/good.mp4': 'y' });
    media.read = (realPath) =>
      realPath === '/media/bad.mp4'
        ? Promise.reject(Object.assign(new Error('i/o error'), { code: 'EIO' }))
        : Promise.resolve(media.contents.get(realPath)!);
    media.remove = () => Promise.reject(Object.assign(new Error('read-only'), { code: 'EROFS' }));
    const docs = [
      buildDoc({ timestamp: old(1), file_path: '/media/bad.mp4' }),
      buildDoc({ timestamp: old(2), file_path: '/media/good.mp4' }),
      buildDoc({ timestamp: old(3), file_path: '/media/none.mp4' }),
    ];
    const skipped: unknown[] = [];
    const notRemoved: unknown[] = [];
    const { content, archive, archiver } = setup(docs, {
      media,
      observer: {
        chunkArchived: () => undefined,
        mediaSkipped: (file) => skipped.push(file),
        mediaNotRemoved: (file) => notRemoved.push(file),
      },
    });

    const report = await archiver.runPass();

    expect(report).toMatchObject({ outcome: 'done', items: 3, mediaFiles: 1 });
    expect(content.items.size).toBe(0);
    expect([...media.contents.keys()].sort()).toEqual(['/media/bad.mp4', '/media/good.mp4']);
    expect(skipped).toEqual([
      expect.objectContaining({ file_path: '/media/none.mp4', reason: 'missing' }),
      expect.objectContaining({
        file_path: '/media/bad.mp4',
        reason: 'refused',
        detail: 'EIO: i/o error',
      }),
    ]);
    expect(notRemoved).toEqual([{ file_path: '/media/good.mp4', detail: 'EROFS: read-only' }]);
    const manifestKey = [...archive.objects.keys()].find((k) => k.startsWith('manifests/'))!;
    const manifest = JSON.parse(archive.objects.get(manifestKey)!.subarray(5).toString('utf8')) as {
      media_skipped: unknown[];
    };
    expect(manifest.media_skipped).toHaveLength(2);
  });
});

describe('restore of media files', () => {
  it('when archived items had media files, then a restore checks, decrypts and hands each back to the media writer, and a tampered one fails', async () => {
    const media = memoryMedia({ '/media/v1.mp4': 'video-1', '/media/v2.mp4': 'video-2' });
    const key = randomBytes(32);
    const docs = [
      buildDoc({ timestamp: old(1), file_path: '/media/v1.mp4' }),
      buildDoc({ timestamp: old(2), file_path: '/media/v1.mp4' }),
      buildDoc({ timestamp: old(3), file_path: '/media/v2.mp4' }),
    ];
    const { archive, archiver } = setup(docs, { media, keyring: archiveKeyring([key]) });
    await archiver.runPass();
    expect(media.contents.size).toBe(0);
    const written = new Map<string, string>();
    const writer = {
      restore: (filePath: string, bytes: Buffer) => {
        const outcome = written.has(filePath) ? ('already' as const) : ('written' as const);
        written.set(filePath, bytes.toString());
        return Promise.resolve(outcome);
      },
    };
    const restore = () =>
      restoreRange(
        {
          archive,
          content: memoryContentStore(),
          keys: openKeysFor(archiveKeyring([key])),
          media: writer,
        },
        { from: old(0), to: now },
      );

    const report = await restore();

    expect(report).toMatchObject({ restored: 3, media: { written: 2, already: 0 } });
    expect(Object.fromEntries(written)).toEqual({
      '/media/v1.mp4': 'video-1',
      '/media/v2.mp4': 'video-2',
    });
    const mediaKey = [...archive.objects.keys()].find((k) => k.startsWith('media/'))!;
    const body = archive.objects.get(mediaKey)!;
    body[body.length - 1] = body[body.length - 1]! ^ 1;
    const tampered = await restore();
    expect(tampered.restored).toBe(3); // the items come back, the file that fails its check not
    expect(tampered.unreadable).toEqual([
      { key: mediaKey, reason: expect.stringMatching(/does not match its recorded SHA-256/) },
    ]);
  });
});

async function waitFor(condition: () => boolean): Promise<void> {
  for (let i = 0; i < 1000 && !condition(); i++) await new Promise((r) => setImmediate(r));
  if (!condition()) throw new Error('condition not reached');
}

describe('archive pass: two workers on one chunk (a put slower than the lease)', () => {
  const ttl = 30_000;
  /** Two workers over shared stores; worker a's put of keys matching `slowKey` waits for release. */
  function twoWorkers(docs: ContentDocument[], slowKey: RegExp) {
    const key = randomBytes(32);
    const { content, archive, state, deps } = setup(structuredClone(docs), {
      keyring: archiveKeyring([key]),
    });
    let clock = now.getTime();
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let stalled = false;
    const slowArchive: typeof archive = {
      ...archive,
      async put(objectKey, body, options) {
        if (!stalled && slowKey.test(objectKey)) {
          stalled = true;
          await released;
        }
        return archive.put(objectKey, body, options);
      },
    };
    const lease = (holder: string) => () => state.acquireLease(holder, ttl, new Date(clock));
    const a = createArchiver({ ...deps, archive: slowArchive, holdsLease: lease('a') });
    const b = createArchiver({ ...deps, holdsLease: lease('b') });
    return {
      content,
      archive,
      state,
      key,
      a,
      b,
      lease,
      stalled: () => stalled,
      release,
      advance: (ms: number) => (clock += ms),
    };
  }

  it('when the first worker writes its manifest after the second archived the chunk, then the manifest names its own chunk, nothing is recorded twice and a restore is exact', async () => {
    const docs = [1, 2, 3].map((s) => buildDoc({ timestamp: old(s) }));
    const w = twoWorkers(docs, /^manifests\//);
    expect(await w.lease('a')()).toBe(true);
    const late = w.a.runPass(); // uploads the chunk, then stalls on its manifest
    await waitFor(w.stalled);

    w.advance(ttl + 1); // a's lease expires; b takes over and archives the same items
    expect(await w.lease('b')()).toBe(true);
    expect(await w.b.runPass()).toMatchObject({ outcome: 'done', items: 3 });
    expect(w.content.items.size).toBe(0);
    w.release(); // a's manifest lands over b's
    expect((await late).outcome).toBe('lease_lost');

    const saved = w.state.current()!;
    expect(saved.counters).toMatchObject({ chunks_uploaded: 1, items_archived: 3 });
    expect(saved.cleanup_pending).toBeNull();
    const restored = memoryContentStore();
    const report = await restoreRange(
      { archive: w.archive, content: restored, keys: openKeysFor(archiveKeyring([w.key])) },
      { from: old(0), to: now },
    );
    expect(report).toMatchObject({ chunks: 1, restored: 3 });
    expect([...restored.items.values()].sort((x, y) => (x._id < y._id ? -1 : 1))).toEqual(docs);
  });

  it('when the lease is lost while a chunk uploads, then the chunk is abandoned: nothing recorded or deleted, and the next holder archives it', async () => {
    const docs = [1, 2, 3, 4].map((s) => buildDoc({ timestamp: old(s) }));
    const w = twoWorkers(docs, /^chunks\//);
    expect(await w.lease('a')()).toBe(true);
    const late = w.a.runPass();
    await waitFor(w.stalled);

    w.advance(ttl + 1);
    expect(await w.lease('b')()).toBe(true);
    w.release();
    expect((await late).outcome).toBe('lease_lost');

    expect(w.content.items.size).toBe(4); // nothing deleted unverified by a worker without a lease
    expect(w.state.current()!.counters.chunks_uploaded).toBe(0);
    expect(w.state.current()!.cleanup_pending).toBeNull();
    expect(await w.b.runPass()).toMatchObject({ outcome: 'done', items: 4 });
    const restored = memoryContentStore();
    await restoreRange(
      { archive: w.archive, content: restored, keys: openKeysFor(archiveKeyring([w.key])) },
      { from: old(0), to: now },
    );
    expect([...restored.items.values()].sort((x, y) => (x._id < y._id ? -1 : 1))).toEqual(docs);
  });

  it("when the lease is found lost between chunks, then the pass stops without clearing the new holder's uploading_since", async () => {
    const docs = [1, 2, 3, 4, 5, 6].map((s) => buildDoc({ timestamp: old(s) }));
    const { content, state, deps } = setup(structuredClone(docs));
    let held = true;
    let chunks = 0;
    const b = new Date('2026-03-01T00:00:05Z');
    const a = createArchiver({
      ...deps,
      holdsLease: () => Promise.resolve(held),
      mayContinue: async () => {
        chunks += 1;
        if (chunks === 2) {
          held = false; // b took over after the first chunk, and starts uploading
          await state.update({ uploading_since: b });
        }
        return held;
      },
    });

    expect((await a.runPass()).outcome).toBe('interrupted');
    expect(content.items.size).toBe(3);
    expect(state.current()!.uploading_since).toEqual(b);
  });

  it.each([
    ['the chunk in hand', false],
    ['a cleanup left by a crash (put back from the archived chunk)', true],
  ])(
    'when the lease is found lost once the delete of %s returned, then the items are put back (a restore may have put them back meanwhile) and the next holder archives them again',
    async (_, crashed) => {
      const docs = [1, 2].map((s) => buildDoc({ timestamp: old(s) }));
      const key = randomBytes(32);
      const { content, state, deps } = setup(structuredClone(docs), {
        keyring: archiveKeyring([key]),
      });
      if (crashed) {
        const dying = createArchiver({
          ...deps,
          onStep: (step) =>
            step === 'recorded' ? Promise.reject(new Error('crash')) : Promise.resolve(),
        });
        expect((await dying.runPass()).outcome).toBe('failed');
        expect(state.current()!.cleanup_pending?.item_ids).toHaveLength(2);
      }
      let held = true;
      const a = createArchiver({
        ...deps,
        holdsLease: () => Promise.resolve(held),
        onStep: (step) => {
          if (step === 'deleted') held = false; // the delete call outlived the lease
          return Promise.resolve();
        },
      });

      expect((await a.runPass()).outcome).toBe('lease_lost');
      expect(ids(content.items.values())).toEqual(ids(docs));
      // Back as restored items: off their devices' archive counts again.
      expect([...content.restoredIds].sort()).toEqual(ids(docs));
      expect(state.current()!.cleanup_pending?.item_ids).toHaveLength(2);

      expect((await createArchiver(deps).runPass()).outcome).toBe('done');
      expect(content.items.size).toBe(0);
      const restored = memoryContentStore();
      await restoreRange(
        { archive: deps.archive, content: restored, keys: openKeysFor(archiveKeyring([key])) },
        { from: old(0), to: now },
      );
      expect(ids(restored.items.values())).toEqual(ids(docs));
    },
  );

  it.each([
    ['before the stalled delete returned', 'deleted'],
    ['while the items were being put back', 'putting back'],
  ])(
    'when the new holder deleted some of the chunk’s items (POST /data/delete-*) %s, then they are not put back, the others are',
    async (_, when) => {
      const mine = buildDoc({ timestamp: old(1), device_name: 'kept' });
      const gone = buildDoc({ timestamp: old(2), device_name: 'deleted' });
      const { content, state, deps } = setup(structuredClone([mine, gone]));
      // The delete under the new lease: its range recorded, its items removed.
      const deleteUnderNewLease = async () => {
        await state.update({
          deleted_ranges: [{ from: null, to: null, device_name: 'deleted', deleted_at: now }],
        });
        content.items.delete(gone._id);
      };
      // Or it lands right after the put back read the deleted ranges, before its insert.
      let putting = false;
      const racing: typeof state = {
        ...state,
        async load(initial) {
          const loaded = await state.load(initial);
          if (putting) {
            putting = false;
            await deleteUnderNewLease();
          }
          return loaded;
        },
      };
      let held = true;
      const a = createArchiver({
        ...deps,
        state: racing,
        holdsLease: () => Promise.resolve(held),
        onStep: async (step) => {
          if (step !== 'deleted') return;
          held = false; // the delete call outlived the lease
          if (when === 'deleted') await deleteUnderNewLease();
          else putting = true;
        },
      });

      expect((await a.runPass()).outcome).toBe('lease_lost');

      expect(ids(content.items.values())).toEqual([mine._id]);
    },
  );

  it('when the lease is lost between recording a chunk and deleting its items, then nothing is deleted and the next holder finishes the cleanup', async () => {
    const docs = [1, 2].map((s) => buildDoc({ timestamp: old(s) }));
    const { content, state, deps } = setup(structuredClone(docs));
    let held = true;
    const a = createArchiver({
      ...deps,
      holdsLease: () => Promise.resolve(held),
      onStep: (step) => {
        if (step === 'recorded') held = false;
        return Promise.resolve();
      },
    });

    expect((await a.runPass()).outcome).toBe('lease_lost');
    expect(content.items.size).toBe(2);
    expect(state.current()!.cleanup_pending?.item_ids).toHaveLength(2);

    expect((await createArchiver(deps).runPass()).outcome).toBe('done');
    expect(content.items.size).toBe(0);
    expect(state.current()!.counters.items_archived).toBe(2);
  });
});

describe('archive pass and commands on the shared state', () => {
  it('when configure {enabled:false} lands while the pass records a chunk, then it is not reverted and the pass stops', async () => {
    const docs = [1, 2, 3, 4, 5, 6].map((s) => buildDoc({ timestamp: old(s) }));
    const { content, state, deps } = setup(docs);
    const commands = createArchiveCommands({ state, defaults, now: () => now });
    let armed = false;
    // The command lands between the pass's reads and writes of the state (any worker may get it).
    const racing: typeof state = {
      ...state,
      async load(initial) {
        const loaded = await state.load(initial);
        if (armed) {
          armed = false;
          await commands.configure({ enabled: false, retention_days: 3 });
        }
        return loaded;
      },
    };
    const archiver = createArchiver({
      ...deps,
      state: racing,
      onStep: (step) => {
        if (step === 'uploaded') armed = true;
        return Promise.resolve();
      },
    });

    const report = await archiver.runPass();

    expect(state.current()!.settings).toEqual({ ...defaults, enabled: false, retention_days: 3 });
    expect(report.outcome).toBe('disabled');
    expect(content.items.size).toBe(3); // the first chunk went; the pass stopped before the next
    expect(state.current()!.counters.items_archived).toBe(3);
  });

  it('when the pass records progress meanwhile, then a run request made by a command meanwhile survives', async () => {
    const docs = [1, 2, 3].map((s) => buildDoc({ timestamp: old(s) }));
    const { state, deps } = setup(docs);
    const commands = createArchiveCommands({ state, defaults, now: () => now });
    let armed = false;
    const racing: typeof state = {
      ...state,
      async load(initial) {
        const loaded = await state.load(initial);
        if (armed) {
          armed = false;
          await commands.requestRun();
        }
        return loaded;
      },
    };
    await createArchiver({
      ...deps,
      state: racing,
      onStep: (step) => {
        if (step === 'recorded') armed = true;
        return Promise.resolve();
      },
    }).runPass();

    expect(state.current()!.run_requested_at).toEqual(now);
  });
});

describe('storage_used reconciled with the store', () => {
  it('when the store holds unreferenced copies and the count was doubled, then reconciling sets storage_used to the bytes stored', async () => {
    const docs = [1, 2, 3, 4].map((s) => buildDoc({ timestamp: old(s) }));
    const { archive, state, archiver } = setup(docs);
    await archiver.runPass();
    archive.objects.set(
      'chunks/2026/01/01/orphan-of-a-late-worker.jsonl.gz.sfa',
      Buffer.alloc(700),
    );
    await state.update({ storage_used: state.current()!.storage_used * 2 });
    const stored = [...archive.objects.values()].reduce((n, body) => n + body.length, 0);

    const result = await archiver.takeOver();

    expect(result.after).toBe(stored);
    expect(state.current()!.storage_used).toBe(stored);
    expect(state.current()!.counters.items_archived).toBe(4); // nothing else touched
  });
});
