/**
 * Status from a snapshot of the state, with two workers on one FerretDB database (each with its
 * own state store connection, as two processes have): the lease holder's pass shows in the other
 * worker's status within a second, and a configure in the status of the worker that made it at
 * once.
 */
import type { ArchiveStatus } from '@screenfleet/contracts';
import { waitFor } from '@screenfleet/runtime';
import { createMongoArchiveStateStore, type ArchiveStateStore } from '@screenfleet/storage';
import { mongoUrl, uniqueName } from '../../../test/services';
import { item, openStores, settings, waitUntil, workerFor, type Stores } from './support';

/** What the snapshot promises: no status answers from a read that started longer ago. */
const BOUND_MS = 1000;

type Worker = ReturnType<typeof workerFor>;
const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/**
 * Worker `a`, which holds the lease (taken before `b` starts, and long enough that `b` never
 * gets it), and worker `b`, which only answers; the archive starts disabled.
 */
async function twoWorkers(): Promise<{ s: Stores; a: Worker; b: Worker; bReads: () => number }> {
  const s = await openStores('fs');
  cleanups.push(() => s.close());
  // b's own connection to the state, as another process would have; its reads counted.
  const bStore = createMongoArchiveStateStore({ url: mongoUrl(), database: s.database });
  cleanups.push(() => bStore.close());
  let bReads = 0;
  const bState: ArchiveStateStore = {
    ...bStore,
    load(initial) {
      bReads += 1;
      return bStore.load(initial);
    },
  };
  const common = { defaults: settings({ enabled: false }), leaseTtlMs: 30_000 };
  const aId = uniqueName('holder-a');
  const a = workerFor(s, { ...common, holderId: aId });
  await a.start();
  cleanups.push(() => a.stop());
  await waitFor(async () => (await s.state.leaseHolder(new Date())) === aId, {
    timeoutMs: 20_000,
    what: 'worker a to take the lease',
  });
  const b = workerFor({ ...s, state: bState }, { ...common, holderId: uniqueName('holder-b') });
  await b.start();
  cleanups.push(() => b.stop());
  return { s, a, b, bReads: () => bReads };
}

/**
 * Asks `worker` for its status every 20 ms until three calls that started `BOUND_MS` after
 * `since` have answered; returns those and how many calls were made in all.
 */
async function statusesAfter(
  worker: Worker,
  since: number,
): Promise<{ late: ArchiveStatus[]; calls: number }> {
  const late: ArchiveStatus[] = [];
  let calls = 0;
  await waitFor(
    async () => {
      const started = Date.now();
      const status = await worker.status();
      calls += 1;
      if (started >= since + BOUND_MS) late.push(status);
      return late.length >= 3;
    },
    { timeoutMs: 20_000, intervalMs: 20, what: 'status calls a second after the change' },
  );
  return { late, calls };
}

describe('archive status from a snapshot, two workers on FerretDB', () => {
  it('when the lease holder runs a pass, then the other worker shows it in its status within a second', async () => {
    const { s, a, b, bReads } = await twoWorkers();
    await s.content.insertItems(Array.from({ length: 12 }, (_, i) => item(30 - i / 10)));
    expect(await b.status()).toMatchObject({ chunks_uploaded: 0, pending_count: 12 });

    await a.execute({ action: 'configure', request: { enabled: true } });
    await a.execute({ action: 'run' });
    // The holder's own pass: its status follows each change it makes. (last_cleanup is written
    // just before the pass ends: is_uploading false says it has.)
    const done = await waitUntil(
      () => a.status(),
      (status) => status.last_cleanup !== null && !status.is_uploading,
    );
    const passEnded = Date.now();
    expect(done).toMatchObject({ chunks_uploaded: 3, pending_count: 0, is_uploading: false });

    const readsBefore = bReads();
    const { late, calls } = await statusesAfter(b, passEnded);
    // From its snapshot: a read every 0.8 s or so while asked every 20 ms, never one per call.
    expect(bReads() - readsBefore).toBeLessThan(calls / 2);
    for (const status of late) {
      expect(status).toMatchObject({
        enabled: true,
        chunks_uploaded: 3,
        watermark: done.watermark,
        last_cleanup: done.last_cleanup,
        storage_used: done.storage_used,
      });
    }
    // pending_count keeps its own cache's rules (a count at most a second old, refreshed behind).
    expect(
      await waitUntil(
        () => b.status(),
        (status) => status.pending_count === 0,
      ),
    ).toMatchObject({ pending_count: 0 });
  });

  it('when either worker configures, then its own status shows it at once, and the other within a second', async () => {
    const { a, b } = await twoWorkers();
    // Each has a snapshot from just now, which a configure must not leave in place.
    expect(await a.status()).toMatchObject({ retention_days: 7, enabled: false });
    expect(await b.status()).toMatchObject({ retention_days: 7, enabled: false });

    const byB = await b.execute({ action: 'configure', request: { retention_days: 12 } });
    const bAfter = await b.status();
    const bConfigured = Date.now();
    expect(byB.status).toMatchObject({ retention_days: 12 });
    expect(bAfter).toMatchObject({ retention_days: 12 });
    for (const status of (await statusesAfter(a, bConfigured)).late) {
      expect(status).toMatchObject({ retention_days: 12 });
    }

    // a's snapshot is fresh from the calls just made: its own configure must not leave it.
    const byA = await a.execute({ action: 'configure', request: { enabled: true } });
    const aAfter = await a.status();
    const aConfigured = Date.now();
    expect(byA.status).toMatchObject({ enabled: true, retention_days: 12 });
    expect(aAfter).toMatchObject({ enabled: true, retention_days: 12 });
    for (const status of (await statusesAfter(b, aConfigured)).late) {
      expect(status).toMatchObject({ enabled: true, retention_days: 12 });
    }
  });
});
