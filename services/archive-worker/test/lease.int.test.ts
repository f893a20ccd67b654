/**
 * Review item 1 against FerretDB and MinIO: a put slower than the lease lets a second worker in;
 * the first one's late writes must not make the archive unrestorable nor delete anything.
 */
import { randomBytes } from 'node:crypto';
import {
  archiveKeyring,
  createArchiver,
  openKeysFor,
  restoreRange,
} from '@screenfleet/archive-worker';
import type { ArchiveStore } from '@screenfleet/storage';
import {
  allItems,
  archivedKeys,
  byId,
  item,
  openStores,
  settings,
  waitUntil,
  type Stores,
} from './support';

const opened: Stores[] = [];
afterEach(async () => {
  for (const s of opened.splice(0)) await s.close();
});

const ttl = 30_000;

/** Worker a's put of the first key matching `slowKey` waits until released. */
async function twoWorkers(slowKey: RegExp) {
  const s = await openStores('s3');
  opened.push(s);
  const key = randomBytes(32);
  let clock = Date.now();
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  let stalled = false;
  const slowArchive: ArchiveStore = {
    ...s.archive,
    put: async (objectKey, body, options) => {
      if (!stalled && slowKey.test(objectKey)) {
        stalled = true;
        await released;
      }
      return s.archive.put(objectKey, body, options);
    },
  };
  const lease = (holder: string) => () => s.state.acquireLease(holder, ttl, new Date(clock));
  const base = {
    content: s.content,
    state: s.state,
    chunkSize: 50,
    defaults: settings(),
    keyring: archiveKeyring([key]),
  };
  return {
    s,
    key,
    lease,
    a: createArchiver({ ...base, archive: slowArchive, holdsLease: lease('a') }),
    b: createArchiver({ ...base, archive: s.archive, holdsLease: lease('b') }),
    stalled: () => Promise.resolve(stalled),
    release,
    advance: (ms: number) => (clock += ms),
  };
}

describe('two workers on one chunk, against FerretDB and MinIO', () => {
  it('when the first worker writes its manifest after the second archived the chunk, then a restore is exact and nothing is recorded twice', async () => {
    const w = await twoWorkers(/^manifests\//);
    const docs = Array.from({ length: 12 }, (_, i) => item(30 + i / 100));
    await w.s.content.insertItems(docs);
    expect(await w.lease('a')()).toBe(true);
    const late = w.a.runPass(); // uploads the chunk, then stalls on its manifest
    await waitUntil(w.stalled, Boolean);

    w.advance(ttl + 1);
    expect(await w.lease('b')()).toBe(true);
    expect(await w.b.runPass()).toMatchObject({ outcome: 'done', items: 12 });
    w.release(); // a's manifest lands over b's
    expect((await late).outcome).toBe('lease_lost');

    expect(await allItems(w.s.content)).toEqual([]);
    expect(await archivedKeys(w.s.archive, 'chunks/')).toHaveLength(2); // side by side
    expect(await archivedKeys(w.s.archive, 'manifests/')).toHaveLength(1);
    const state = await w.s.state.load(undefined as never);
    expect(state.counters).toMatchObject({ chunks_uploaded: 1, items_archived: 12 });
    const report = await restoreRange(
      { archive: w.s.archive, content: w.s.content, keys: openKeysFor(archiveKeyring([w.key])) },
      { from: new Date(0), to: new Date() },
    );
    expect(report).toMatchObject({ chunks: 1, restored: 12 });
    expect(byId(await allItems(w.s.content))).toEqual(byId(docs));
  });

  it('when the lease is lost while a chunk uploads, then nothing is recorded or deleted and the next holder archives it', async () => {
    const w = await twoWorkers(/^chunks\//);
    const docs = Array.from({ length: 8 }, (_, i) => item(30 + i / 100));
    await w.s.content.insertItems(docs);
    expect(await w.lease('a')()).toBe(true);
    const late = w.a.runPass();
    await waitUntil(w.stalled, Boolean);

    w.advance(ttl + 1);
    expect(await w.lease('b')()).toBe(true);
    w.release();
    expect((await late).outcome).toBe('lease_lost');

    expect(await allItems(w.s.content)).toHaveLength(8);
    const state = await w.s.state.load(undefined as never);
    expect(state.counters.chunks_uploaded).toBe(0);
    expect(state.cleanup_pending).toBeNull();
    expect(await w.b.runPass()).toMatchObject({ outcome: 'done', items: 8 });
    await restoreRange(
      { archive: w.s.archive, content: w.s.content, keys: openKeysFor(archiveKeyring([w.key])) },
      { from: new Date(0), to: new Date() },
    );
    expect(byId(await allItems(w.s.content))).toEqual(byId(docs));
  });
});
