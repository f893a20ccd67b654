import { chmodSync, mkdirSync, mkdtempSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { rename, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createFilesystemArchiveStore } from '@screenfleet/storage';
import { describeArchiveStoreContract, putObject } from './archive-store.contract';

// Real file I/O in a temp directory, so this is an integration test even without a server.
describeArchiveStoreContract('filesystem', () => {
  const parent = mkdtempSync(path.join(os.tmpdir(), 'sf-archive-'));
  const root = path.join(parent, 'archive');
  const store = createFilesystemArchiveStore({ root });
  return Promise.resolve({
    store,
    tamper: (key: string, body: Buffer) => writeFile(path.join(root, ...key.split('/')), body),
    // A removed or unmounted volume: the directory is gone until it is put back.
    breakStore: async () => {
      await rename(root, `${root}.away`);
      return () => rename(`${root}.away`, root);
    },
    cleanup: () => rm(parent, { recursive: true, force: true }),
  });
});

describe('filesystem archive store', () => {
  let parent: string;

  beforeEach(() => {
    parent = mkdtempSync(path.join(os.tmpdir(), 'sf-archive-'));
  });

  afterEach(async () => {
    await rm(parent, { recursive: true, force: true });
  });

  it('when keys try to escape the root, then nothing is written outside it', async () => {
    const root = path.join(parent, 'archive');
    const store = createFilesystemArchiveStore({ root });
    await store.ensureReady();

    for (const key of ['../outside', 'a/../../outside', '/tmp/outside', 'a\\..\\..\\outside']) {
      await putObject(store, key, Buffer.from('x')).catch(() => undefined);
    }

    expect(readdirSync(parent)).toEqual(['archive']);
    expect(readdirSync(root)).toEqual([]);
  });

  it('when objects are put, then no temp file is left beside them', async () => {
    const root = path.join(parent, 'archive');
    const store = createFilesystemArchiveStore({ root });
    await store.ensureReady();

    await putObject(store, 'chunks/a', Buffer.from('one'));
    await putObject(store, 'chunks/a', Buffer.from('two'));

    expect(readdirSync(path.join(root, 'chunks'))).toEqual(['a']);
  });

  it('when the root was never created, then ensureReady creates it with its parents', async () => {
    const root = path.join(parent, 'deep', 'er', 'archive');
    const store = createFilesystemArchiveStore({ root });

    await store.ensureReady();
    await putObject(store, 'chunks/a', Buffer.from('one'));

    expect(readdirSync(path.join(root, 'chunks'))).toEqual(['a']);
  });

  it('when writes were killed mid-file (their hidden temp files left), then removeUnfinished removes them, their bytes counted, and keeps every object', async () => {
    const root = path.join(parent, 'archive');
    const store = createFilesystemArchiveStore({ root });
    await store.ensureReady();
    await putObject(store, 'chunks/2026/01/01/a.sfa', Buffer.from('kept'));
    // What a put killed before its rename leaves: the temp file beside its target.
    writeFileSync(path.join(root, 'chunks/2026/01/01/.b.sfa.0a1b2c3d4e5f.partial'), 'half');
    mkdirSync(path.join(root, 'media/2026/01/01/x'), { recursive: true });
    writeFileSync(
      path.join(root, 'media/2026/01/01/x/.0-c.mp4.sfa.00aa11bb22cc.partial'),
      Buffer.alloc(1_000_000),
    );
    writeFileSync(path.join(root, '.not-ours'), 'left alone'); // not a temp file of the store

    expect(await store.removeUnfinished()).toEqual({ count: 2, bytes: 1_000_004 });

    expect(readdirSync(path.join(root, 'chunks/2026/01/01'))).toEqual(['a.sfa']);
    expect(readdirSync(path.join(root, 'media/2026/01/01/x'))).toEqual([]);
    expect(readdirSync(root).sort()).toEqual(['.not-ours', 'chunks', 'media']);
    expect(await store.removeUnfinished()).toEqual({ count: 0, bytes: 0 });
  });

  describe('data at rest is its owner’s only', () => {
    const modeOf = (file: string) => statSync(file).mode & 0o777;
    const umask = process.umask(0o022);
    afterAll(() => process.umask(umask));

    it('when the archive is created and written under umask 022, then every directory is 0700 and every object 0600', async () => {
      const root = path.join(parent, 'archive');
      const store = createFilesystemArchiveStore({ root });
      await store.ensureReady();

      await putObject(store, 'chunks/2026/11/01/a.sfa', Buffer.from('one'));
      await putObject(store, 'manifests/2026/11/01/a.sfa', Buffer.from('two'));

      expect(modeOf(root)).toBe(0o700);
      for (const dir of ['chunks', 'chunks/2026', 'chunks/2026/11', 'chunks/2026/11/01']) {
        expect([dir, modeOf(path.join(root, dir))]).toEqual([dir, 0o700]);
      }
      for (const key of ['chunks/2026/11/01/a.sfa', 'manifests/2026/11/01/a.sfa']) {
        expect([key, modeOf(path.join(root, key))]).toEqual([key, 0o600]);
      }
    });

    it('when the archive directory exists and others may read it, then ensureReady refuses with the fix and nothing is written', async () => {
      const root = path.join(parent, 'archive');
      mkdirSync(root);
      chmodSync(root, 0o755);
      const store = createFilesystemArchiveStore({ root });

      await expect(store.ensureReady()).rejects.toThrow(
        `archive directory (ARCHIVE_DIR) ${root} is open to other users (mode 755): run chmod 700 ${root}`,
      );
      expect(readdirSync(root)).toEqual([]);
    });
  });
});
