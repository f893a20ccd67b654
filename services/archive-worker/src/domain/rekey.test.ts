import { randomBytes } from 'node:crypto';
import type { ArchiveSettings } from '@screenfleet/contracts';
import {
  buildDoc,
  memoryArchiveStore,
  memoryContentStore,
  memoryMedia,
  memoryStateStore,
} from '../../test/memory-ports';
import { openKeysFor } from './archive-keys';
import { createArchiver } from './archive-pass';
import { archiveKeyring, sealOf } from './chunk-codec';
import { rekeyArchive, RekeyNotVerifiedError } from './rekey';
import { restoreRange } from './restore';

const now = new Date('2026-03-01T00:00:00Z');
const old = (seconds: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, seconds));
const defaults: ArchiveSettings = { enabled: true, retention_days: 7, storage_limit: 1e12 };
const [k1, k2] = [randomBytes(32), randomBytes(32)];

/** An archive with a plain chunk (before any key) and one sealed with k1, media included. */
async function mixedArchive() {
  const archive = memoryArchiveStore();
  const state = memoryStateStore();
  const media = memoryMedia({ '/media/a.mp4': 'video a', '/media/b.mp4': 'video b' });
  const docs = [
    buildDoc({ timestamp: old(1), file_path: '/media/a.mp4' }),
    buildDoc({ timestamp: old(2), file_path: '/media/b.mp4' }),
  ];
  const pass = (doc: (typeof docs)[number], keys: Buffer[]) =>
    createArchiver({
      content: memoryContentStore([doc]),
      archive,
      state,
      media,
      keyring: archiveKeyring(keys),
      chunkSize: 10,
      defaults,
      now: () => now,
    }).runPass();
  await pass(docs[0]!, []);
  await pass(docs[1]!, [k1]);
  return { archive, state, docs };
}

/** The caller's recordSeal, which this suite does not look at unless it says so. */
const recordSeal = () => Promise.resolve();

const seals = (archive: ReturnType<typeof memoryArchiveStore>) =>
  [...archive.objects.values()].map((body) => sealOf(body));

describe('rekey', () => {
  it('when rekeyed to the newest key, then every object is sealed with it, nothing it replaced is left, and the newest key alone restores everything', async () => {
    const { archive, state, docs } = await mixedArchive();
    expect(new Set(seals(archive)).size).toBe(2); // plain and k1
    const keyring = archiveKeyring([k2, k1]);
    const before = [...archive.objects.keys()];

    const report = await rekeyArchive({
      archive,
      keyring,
      keys: openKeysFor(keyring, state.current()),
      recordSeal,
    });

    expect(report).toMatchObject({ manifests: 2, rekeyed: 2, current: 0, unreadable: [] });
    expect(report.sealedWith).toEqual([keyring.writer!.id]);
    expect(seals(archive)).toEqual(seals(archive).map(() => keyring.writer!.id));
    expect(archive.objects.size).toBe(before.length);
    const manifests = before.filter((key) => key.startsWith('manifests/'));
    expect([...archive.objects.keys()].filter((key) => before.includes(key))).toEqual(manifests);
    const written = new Map<string, string>();
    const restored = memoryContentStore();
    const result = await restoreRange(
      {
        archive,
        content: restored,
        keys: { readers: archiveKeyring([k2]).readers, acceptPlain: false },
        media: {
          restore: (filePath, bytes) => {
            written.set(filePath, bytes.toString());
            return Promise.resolve('written');
          },
        },
      },
      { from: old(0), to: now },
    );
    expect(result).toMatchObject({ restored: 2, unreadable: [] });
    expect([...restored.items.values()]).toEqual(docs);
    expect(Object.fromEntries(written)).toEqual({
      '/media/a.mp4': 'video a',
      '/media/b.mp4': 'video b',
    });

    const again = await rekeyArchive({ archive, keyring, keys: openKeysFor(keyring), recordSeal });
    expect(again).toMatchObject({ rekeyed: 0, current: 2 });
  });

  it('when a new object does not verify in the store, then the rekey stops and nothing old is removed: the archive restores as before', async () => {
    const { archive, docs } = await mixedArchive();
    const keyring = archiveKeyring([k2, k1]);
    const before = new Map(archive.objects);
    let puts = 0;
    const flaky = {
      ...archive,
      verify: (key: string, sha256: string) =>
        // The second chunk's new copy does not verify (the first chunk is rekeyed fully).
        key.startsWith('chunks/') && ++puts === 2
          ? Promise.resolve(false)
          : archive.verify(key, sha256),
    };

    await expect(
      rekeyArchive({ archive: flaky, keyring, keys: openKeysFor(keyring), recordSeal }),
    ).rejects.toThrow(RekeyNotVerifiedError);

    // The second chunk (sealed with k1) failed: its manifest, chunk and media are as they were.
    const second = [...before.keys()].filter((key) => key.includes('20260101T000002000Z'));
    expect(second.length).toBeGreaterThanOrEqual(3);
    for (const key of second)
      expect([key, archive.objects.get(key)]).toEqual([key, before.get(key)]);
    const restored = memoryContentStore();
    const result = await restoreRange(
      { archive, content: restored, keys: openKeysFor(archiveKeyring([k2, k1])) },
      { from: old(0), to: now },
    );
    expect(result).toMatchObject({ restored: 2, unreadable: [] });
    expect([...restored.items.values()]).toEqual(docs);
  });

  it('when a manifest opens with none of the keys, then it is reported by name, left as it is, and its key stays in sealedWith', async () => {
    const { archive } = await mixedArchive();
    const keyring = archiveKeyring([k2]); // k1 is lost
    const k1Manifest = [...archive.objects.entries()].find(
      ([key, body]) =>
        key.startsWith('manifests/') && sealOf(body) === archiveKeyring([k1]).writer!.id,
    )!;

    const report = await rekeyArchive({ archive, keyring, keys: openKeysFor(keyring), recordSeal });

    expect(report).toMatchObject({ rekeyed: 1, unreadable: [{ key: k1Manifest[0] }] });
    expect(report.sealedWith).toEqual([keyring.writer!.id, archiveKeyring([k1]).writer!.id].sort());
    expect(archive.objects.get(k1Manifest[0])).toBe(k1Manifest[1]);
  });

  it('when it rekeys and is cut short, then the new seal was recorded once, before any object was sealed with it', async () => {
    const { archive } = await mixedArchive();
    const keyring = archiveKeyring([k2, k1]);
    const target = keyring.writer!.id;
    const recorded: Array<{ seal: string; sealedWithIt: number }> = [];
    let puts = 0;
    const dying = {
      ...archive,
      // Killed at the fourth write: the first chunk, its media file and manifest are rekeyed.
      put: (...args: Parameters<typeof archive.put>) =>
        ++puts === 4 ? Promise.reject(new Error('killed')) : archive.put(...args),
    };

    await expect(
      rekeyArchive({
        archive: dying,
        keyring,
        keys: openKeysFor(keyring),
        recordSeal: (seal) => {
          recorded.push({ seal, sealedWithIt: seals(archive).filter((s) => s === seal).length });
          return Promise.resolve();
        },
      }),
    ).rejects.toThrow('killed');

    expect(recorded).toEqual([{ seal: target, sealedWithIt: 0 }]);
    expect(seals(archive)).toContain(target);
  });

  it('when every object is sealed with the newest key already, then no seal is recorded', async () => {
    const { archive } = await mixedArchive();
    const keyring = archiveKeyring([k2, k1]);
    await rekeyArchive({ archive, keyring, keys: openKeysFor(keyring), recordSeal });
    const recorded: string[] = [];

    const again = await rekeyArchive({
      archive,
      keyring,
      keys: openKeysFor(keyring),
      recordSeal: (seal) => Promise.resolve(void recorded.push(seal)),
    });

    expect(again).toMatchObject({ rekeyed: 0, current: 2 });
    expect(recorded).toEqual([]);
  });
});
