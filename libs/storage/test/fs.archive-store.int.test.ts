import { mkdtempSync, readdirSync } from 'node:fs';
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
});
