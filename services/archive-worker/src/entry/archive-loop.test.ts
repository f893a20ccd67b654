import { createLogger, Registry, waitFor } from '@screenfleet/runtime';
import { memoryArchiveStore, memoryContentStore, memoryStateStore } from '../../test/memory-ports';
import { createArchiver, type Archiver, type PassReport } from '../domain/archive-pass';
import { createArchiveCommands, type ArchiveCommands } from '../domain/archive-commands';
import { createArchiveMetrics } from '../metrics';
import { createArchiveLoop, type ArchiveLoopDeps } from './archive-loop';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** What takeOver reports when the archive store holds nothing to sweep or count. */
const nothingToReconcile = () => ({
  before: 0,
  after: 0,
  sweep: {
    orphans: { count: 0, bytes: 0 },
    unfinished: { count: 0, bytes: 0 },
    kept: [],
    storedBytes: 0,
  },
});

/** A loop of holder 'a' over an enabled archive, passes an hour apart unless asked. */
function loopOf(deps: Pick<ArchiveLoopDeps, 'archiver' | 'leases'> & Partial<ArchiveLoopDeps>) {
  return createArchiveLoop({
    commands: {
      load: () => Promise.resolve({ run_requested_at: null, settings: { enabled: true } }),
    } as unknown as ArchiveCommands,
    holderId: 'a',
    leaseTtlMs: 60_000,
    intervalMs: 60_000,
    retry: { initialMs: 1000, maxMs: 10_000 },
    logger: createLogger({ service: 'test', level: 'silent' }),
    metrics: createArchiveMetrics(new Registry()),
    now: () => new Date(),
    ...deps,
  });
}

describe('archive loop', () => {
  it('when a pass outlasts the lease, then the holder keeps renewing it and no other worker gets in', async () => {
    const ttl = 300;
    const leases = memoryStateStore();
    let passes = 0;
    const done: PassReport = { outcome: 'done', chunks: 1, items: 1, mediaFiles: 0, failures: 0 };
    const archiver = {
      takeOver: () => Promise.resolve(nothingToReconcile()),
      async runPass() {
        passes += 1;
        await sleep(4 * ttl); // one slow chunk: longer than the lease
        return done;
      },
    } as unknown as Archiver;
    const loop = loopOf({
      archiver,
      leases,
      leaseTtlMs: ttl,
    });
    loop.start();
    try {
      await waitFor(() => passes > 0, { timeoutMs: 5000, intervalMs: 5, what: 'the first pass' });
      for (let i = 0; i < 6; i += 1) {
        await sleep(ttl / 2);
        expect(await leases.acquireLease('b', ttl, new Date())).toBe(false);
      }
      expect(await loop.confirmLease()).toBe(true);
    } finally {
      await loop.stop();
    }
  });

  it('when storage_used cannot be reconciled on taking the lease, then no pass runs until it is', async () => {
    const ttl = 150;
    let listingWorks = false;
    let reconciles = 0;
    let passes = 0;
    const archiver = {
      takeOver() {
        reconciles += 1;
        return listingWorks
          ? Promise.resolve(nothingToReconcile())
          : Promise.reject(new Error('archive store unavailable'));
      },
      runPass() {
        passes += 1;
        return Promise.resolve({
          outcome: 'done',
          chunks: 0,
          items: 0,
          mediaFiles: 0,
          failures: 0,
        });
      },
    } as unknown as Archiver;
    const loop = loopOf({
      archiver,
      leases: memoryStateStore(),
      leaseTtlMs: ttl,
    });
    loop.start();
    try {
      await waitFor(() => reconciles >= 3, {
        timeoutMs: 5000,
        intervalMs: 5,
        what: '3 reconciles',
      });
      expect(passes).toBe(0);
      listingWorks = true;
      await waitFor(() => passes > 0, { timeoutMs: 5000, intervalMs: 5, what: 'a pass' });
      expect(passes).toBe(1);
    } finally {
      await loop.stop();
    }
  });

  it('when a worker takes the lease, then storage_used is set from what the archive store holds', async () => {
    const state = memoryStateStore();
    const archive = memoryArchiveStore();
    archive.objects.set('chunks/2026/01/01/left-by-a-crash.jsonl.gz.sfa', Buffer.alloc(1234));
    archive.objects.set('media/2026/01/01/x/0-abc-v.mp4.sfa', Buffer.alloc(66));
    const defaults = { enabled: false, retention_days: 7, storage_limit: 1e12 };
    const now = () => new Date();
    await createArchiveCommands({ state, defaults, now }).load();
    await state.update({ storage_used: 5 }); // counted by no one knows whom
    const archiver = createArchiver({
      content: memoryContentStore(),
      archive,
      state,
      chunkSize: 10,
      defaults,
    });
    const loop = loopOf({
      archiver,
      commands: createArchiveCommands({ state, defaults, now }),
      leases: state,
      now,
    });
    loop.start();
    try {
      await waitFor(() => state.current()!.storage_used === 1300, {
        timeoutMs: 5000,
        intervalMs: 5,
        what: () => `storage_used 1300 (is ${state.current()!.storage_used})`,
      });
      expect(state.current()!.storage_used).toBe(1300);
    } finally {
      await loop.stop();
    }
  });
  it('when a renewal is in flight as a pass ends, then the task lease is still given up and stays free', async () => {
    const ttl = 300;
    const store = memoryStateStore();
    // The task lease's renewal answers late, as a busy store does: the pass has ended by then.
    let slowTask = false;
    const leases: typeof store = {
      ...store,
      async acquireLease(holder, ttlMs, now, lease) {
        if (lease === 'task' && slowTask) await sleep(50);
        return store.acquireLease(holder, ttlMs, now, lease);
      },
    };
    let passes = 0;
    let confirmLease: () => Promise<boolean> = () => Promise.resolve(true);
    const archiver = {
      takeOver: () => Promise.resolve(nothingToReconcile()),
      runPass() {
        passes += 1;
        slowTask = true;
        void confirmLease(); // the pass's last renewal, still running when it returns
        return Promise.resolve({
          outcome: 'done',
          chunks: 1,
          items: 1,
          mediaFiles: 0,
          failures: 0,
        });
      },
    } as unknown as Archiver;
    const loop = loopOf({
      archiver,
      leases,
      leaseTtlMs: ttl,
    });
    confirmLease = loop.confirmLease;
    loop.start();
    try {
      await waitFor(() => passes > 0, { timeoutMs: 5000, intervalMs: 5, what: 'the pass' });
      // Three renewal periods later, no task holds the archive: a restore may take it.
      for (let i = 0; i < 6; i += 1) {
        await sleep(ttl / 2);
        expect(await store.leaseHolder(new Date(), 'task')).toBeNull();
      }
    } finally {
      await loop.stop();
    }
  });

  it('when archiving is disabled, then the lease holder still deletes expired audit rows, and a worker without the lease does not', async () => {
    const leases = memoryStateStore();
    const archiver = {
      takeOver: () => Promise.resolve(nothingToReconcile()),
      runPass: () => Promise.reject(new Error('no pass while disabled')),
    } as unknown as Archiver;
    const commands = {
      load: () => Promise.resolve({ run_requested_at: null, settings: { enabled: false } }),
    } as unknown as ArchiveCommands;
    const runs: string[] = [];
    const retentionOf = (holder: string) => ({
      runIfDue: async (mayContinue: () => Promise<boolean>) => {
        if (await mayContinue()) runs.push(holder);
        return 0;
      },
    });
    const a = loopOf({ archiver, leases, commands, auditRetention: retentionOf('a') });
    a.start();
    try {
      await waitFor(() => runs.length > 0, { timeoutMs: 5000, intervalMs: 5, what: 'a run' });
      const b = loopOf({
        archiver,
        leases,
        commands,
        holderId: 'b',
        auditRetention: retentionOf('b'),
      });
      b.start();
      await sleep(100);
      await b.stop();
      expect(new Set(runs)).toEqual(new Set(['a']));
    } finally {
      await a.stop();
    }
  });
});
