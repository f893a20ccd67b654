import {
  createEnvelope,
  StoreUnavailableError,
  validators,
  type ArchiveReply,
  type Envelope,
} from '@screenfleet/contracts';
import type { Bus } from '@screenfleet/bus';
import { createLogger, Registry } from '@screenfleet/runtime';
import {
  buildDoc,
  memoryArchiveStore,
  memoryContentStore,
  memoryStateStore,
} from '../test/memory-ports';
import { createArchiveWorker } from './index';

const now = new Date('2026-03-01T00:00:00Z');

function setup(
  options: { state?: ReturnType<typeof memoryStateStore>; clock?: () => Date; id?: string } = {},
) {
  let handler: ((request: Envelope<unknown>) => Promise<Envelope<unknown>>) | undefined;
  const bus: Pick<Bus, 'serve'> = {
    serve: (_queue, h) => {
      handler = h as typeof handler;
      return Promise.resolve({ cancel: () => Promise.resolve() });
    },
  };
  const content = memoryContentStore([
    buildDoc({ timestamp: new Date('2026-01-01T00:00:00Z') }),
    buildDoc({ timestamp: new Date('2026-01-02T00:00:00Z') }),
    buildDoc({ timestamp: new Date('2026-02-27T00:00:00Z') }),
  ]);
  const state = options.state ?? memoryStateStore();
  const worker = createArchiveWorker({
    bus,
    content,
    archive: memoryArchiveStore(),
    state,
    defaults: { enabled: false, retention_days: 30, storage_limit: 5000 },
    chunkSize: 2,
    intervalMs: 60_000,
    leaseTtlMs: 30_000,
    retry: { initialMs: 1000, maxMs: 10_000 },
    holderId: options.id ?? 'test-1',
    logger: createLogger({ service: 'test', level: 'silent' }),
    registry: new Registry(),
    now: options.clock ?? (() => now),
  });
  const call = async (payload: unknown): Promise<ArchiveReply> => {
    const reply = await handler!(createEnvelope('archive.command', payload));
    expect(validators.archiveReply.check(reply.payload)).toEqual([]);
    return reply.payload as ArchiveReply;
  };
  workers.push(worker);
  return { worker, call, state, content };
}

const workers: Array<{ stop(): Promise<void> }> = [];
afterEach(async () => {
  await Promise.all(workers.splice(0).map((worker) => worker.stop()));
});

describe('archive worker commands', () => {
  it('when status is asked before anything ran, then every field is there and numbers are numbers', async () => {
    const { worker, call } = setup();
    await worker.start();

    const reply = await call({ action: 'status' });

    expect(reply).toEqual({
      outcome: 'ok',
      status: {
        enabled: false,
        retention_days: 30,
        watermark: null,
        last_cleanup: null,
        last_error: null,
        storage_used: 0,
        storage_limit: 5000,
        pending_count: 2,
        is_uploading: false,
        chunks_uploaded: 0,
        media_files_uploaded: 0,
        media_files_pending: 0,
      },
    });
  });

  it('when init is sent twice, then the first enables the archive and the second is a conflict', async () => {
    const { worker, call } = setup();
    await worker.start();

    const first = await call({ action: 'init', request: { retention_days: 40 } });
    const second = await call({ action: 'init', request: {} });

    expect(first).toMatchObject({ outcome: 'ok', status: { enabled: true, retention_days: 40 } });
    expect(second).toMatchObject({ outcome: 'refused', code: 'conflict' });
  });

  it('when configure changes the retention, then status and pending_count follow', async () => {
    const { worker, call } = setup();
    await worker.start();

    const reply = await call({ action: 'configure', request: { retention_days: 1 } });

    expect(reply).toMatchObject({ outcome: 'ok', status: { retention_days: 1, pending_count: 3 } });
  });

  it('when a command is invalid, then it is refused as validation_failed', async () => {
    const { worker, call } = setup();
    await worker.start();

    expect(await call({ action: 'wipe' })).toMatchObject({
      outcome: 'refused',
      code: 'validation_failed',
    });
    expect(await call({ action: 'configure', request: { retention_days: 0 } })).toMatchObject({
      outcome: 'refused',
      code: 'validation_failed',
    });
  });

  it('when a restore is asked while the archive is enabled, then it is refused as a conflict and nothing is read; once disabled it runs', async () => {
    const { worker, call } = setup();
    await worker.start();
    await call({ action: 'configure', request: { enabled: true } });
    const request = { from: '2000-01-01T00:00:00Z', to: '2100-01-01T00:00:00Z' };

    const refused = await call({ action: 'restore', request });
    await call({ action: 'configure', request: { enabled: false } });
    const allowed = await call({ action: 'restore', request });

    expect(refused).toMatchObject({
      outcome: 'refused',
      code: 'conflict',
      message: expect.stringMatching(/disable the archive first/),
    });
    expect(allowed).toMatchObject({ outcome: 'ok', restored: 0 });
  });

  it('when a delete is asked while another task holds the archive, then it is refused as a conflict naming it and deletes nothing; once free it deletes and answers counts', async () => {
    const { worker, call, state, content } = setup();
    await worker.start();
    await state.acquireLease('restore other-worker#1', 60_000, now, 'task');
    const request = { from: '2000-01-01T00:00:00Z', to: '2100-01-01T00:00:00Z' };

    const refused = await call({ action: 'delete', request });
    expect(content.items.size).toBe(3);
    await state.releaseLease('restore other-worker#1', 'task');
    const deleted = await call({ action: 'delete', request });

    expect(refused).toMatchObject({
      outcome: 'refused',
      code: 'conflict',
      message: expect.stringMatching(/busy with a restore/),
    });
    expect(deleted).toMatchObject({
      outcome: 'ok',
      deleted: { items_deleted: 3, archived_items_deleted: 0 },
      status: { pending_count: 0 },
    });
    expect(content.items.size).toBe(0);
  }, 15_000);
});

/**
 * The shared state of several workers in memory, counting the reads that reach it and failing
 * them on demand (a store outage), on a clock the test moves.
 */
function sharedState() {
  const store = memoryStateStore();
  let reads = 0;
  let outage: Error | undefined;
  let time = now.getTime();
  const state: typeof store = {
    ...store,
    load(initial) {
      reads += 1;
      return outage ? Promise.reject(outage) : store.load(initial);
    },
  };
  return {
    state,
    clock: () => new Date(time),
    advance: (ms: number) => (time += ms),
    reads: () => reads,
    failWith: (error?: Error) => (outage = error),
  };
}

describe('archive status from a snapshot of the state', () => {
  it('when status is asked many times, then the state is read once for them, not per call', async () => {
    const shared = sharedState();
    const { worker } = setup(shared);
    await worker.status();
    const before = shared.reads();

    const statuses = await Promise.all(Array.from({ length: 50 }, () => worker.status()));
    for (let i = 0; i < 5; i += 1) {
      shared.advance(150);
      statuses.push(await worker.status());
    }

    expect(shared.reads() - before).toBe(0);
    expect(statuses.every((status) => status.retention_days === 30)).toBe(true);
  });

  it('when one worker configures, then its own status shows it at once, and the other worker shows it within a second', async () => {
    const shared = sharedState();
    const a = setup({ ...shared, id: 'worker-a' }).worker;
    const b = setup({ ...shared, id: 'worker-b' }).worker;
    await Promise.all([a.status(), b.status()]);

    const reply = await a.execute({ action: 'configure', request: { retention_days: 12 } });
    const own = await a.status();
    shared.advance(1000);
    const otherWithin = await b.status();
    shared.advance(1);
    const otherAfter = await b.status();

    expect(reply.status.retention_days).toBe(12);
    expect(own.retention_days).toBe(12);
    expect(otherWithin.retention_days).toBe(30); // its snapshot, not a read per call
    expect(otherAfter.retention_days).toBe(12);
  });

  it('when the state store is unreachable, then status is refused as store_unavailable, as when it read the store on each call', async () => {
    const shared = sharedState();
    const { worker, call } = setup(shared);
    await worker.start();
    expect(await call({ action: 'status' })).toMatchObject({ outcome: 'ok' });

    shared.failWith(
      new StoreUnavailableError('archive state store unreachable: connect ECONNREFUSED'),
    );
    shared.advance(1001);

    expect(await call({ action: 'status' })).toEqual({
      outcome: 'refused',
      code: 'store_unavailable',
      message: 'archive state store unreachable: connect ECONNREFUSED',
    });
    shared.failWith(undefined);
    expect(await call({ action: 'status' })).toMatchObject({ outcome: 'ok' });
  });
});
