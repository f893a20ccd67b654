import {
  initialArchiveState,
  StoreUnavailableError,
  type ArchiveSettings,
  type ArchiveState,
} from '@screenfleet/contracts';
import { memoryStateStore } from '../../test/memory-ports';
import { createStateSnapshot } from './state-snapshot';

const settings: ArchiveSettings = { enabled: true, retention_days: 30, storage_limit: 1024 };

/**
 * A snapshot over a store whose loads resolve only when the test lets them (`settle`), on a
 * clock the test moves: every timing rule is checked without waiting for time to pass.
 */
function setup() {
  let clock = 0;
  const store = memoryStateStore();
  let failure: Error | undefined;
  const loads: Array<() => void> = [];
  let released = 0;
  let inFlight = 0;
  let mostInFlight = 0;
  /** The raw store's load, held until released; with `failure` set it rejects. */
  const load = () =>
    new Promise<ArchiveState>((resolve, reject) => {
      inFlight += 1;
      mostInFlight = Math.max(mostInFlight, inFlight);
      // What the store holds when the read reaches it (now), as a real read would see.
      const seen = store.load(initialArchiveState(settings, new Date(0)));
      const error = failure;
      loads.push(() => {
        inFlight -= 1;
        if (error) reject(error);
        else void seen.then(resolve);
      });
    });
  const snapshot = createStateSnapshot({
    load,
    now: () => new Date(clock),
    maxAgeMs: 1000,
    refreshAfterMs: 800,
  });
  return {
    snapshot,
    /** What this worker writes through. */
    tracked: snapshot.track(store),
    /** Another worker's writes: straight to the shared store, unseen by this snapshot. */
    other: store,
    /** Reads started so far. */
    reads: () => loads.length + released,
    pending: () => loads.length,
    mostInFlight: () => mostInFlight,
    advance: (ms: number) => (clock += ms),
    failWith: (error?: Error) => (failure = error),
    /** Lets every load started so far answer, and what follows from it run. */
    async settle() {
      while (loads.length > 0) {
        const batch = loads.splice(0);
        released += batch.length;
        batch.forEach((answer) => answer());
        await new Promise((resolve) => setImmediate(resolve));
      }
    },
  };
}
async function primed() {
  const t = setup();
  const first = t.snapshot.get();
  await t.settle();
  await first;
  return t;
}

describe('the archive state snapshot status answers from', () => {
  it('when many status calls come within the bound, then one read serves them all, however many ask at once', async () => {
    const t = setup();
    const calls = Array.from({ length: 20 }, () => t.snapshot.get());
    await t.settle();
    await Promise.all(calls);
    for (let i = 0; i < 7; i += 1) {
      t.advance(100);
      await t.snapshot.get();
    }

    expect(t.reads()).toBe(1);
  });

  it('when this worker writes, then the next status waits for a read that started after the write, even with one in flight from before it', async () => {
    const t = await primed();
    t.advance(900); // old enough for a read behind the answers
    await t.snapshot.get();
    expect(t.pending()).toBe(1); // started before the write below

    await t.tracked.update({ last_error: 'mine' });
    const after = t.snapshot.get();
    await t.settle();

    expect((await after).last_error).toBe('mine');
    expect(t.reads()).toBe(3);
    expect(t.mostInFlight()).toBe(1);
  });

  it('when this worker writes and reads the state back (as a pass records a chunk), then status answers from that read with no read of its own', async () => {
    const t = await primed();
    await t.tracked.update({ last_error: 'recorded' });
    await t.tracked.load(initialArchiveState(settings, new Date(0)));

    expect((await t.snapshot.get()).last_error).toBe('recorded');
    expect(t.reads()).toBe(1);
  });

  it('when a write of this worker fails, then status does not answer from the read before it', async () => {
    const t = await primed();
    const failing = t.snapshot.track({
      ...t.other,
      update: () => Promise.reject(new Error('timed out')),
    });
    await expect(failing.update({ last_error: 'maybe' })).rejects.toThrow('timed out');

    // It may have landed all the same: the snapshot from before it is not used.
    const after = t.snapshot.get();
    expect(t.pending()).toBe(1);
    await t.settle();
    await after;
    expect(t.reads()).toBe(2);
  });

  it('when another worker changes the state, then status shows it once the snapshot is older than a second, and never later', async () => {
    const t = await primed();
    await t.other.update({
      counters: { chunks_uploaded: 3, items_archived: 12, media_files_uploaded: 0 },
    });

    t.advance(1000);
    const within = await t.snapshot.get(); // 1 s old: still answers
    t.advance(1);
    const beyond = t.snapshot.get(); // over 1 s: waits for a read that starts now
    await t.settle();

    expect(within.counters.chunks_uploaded).toBe(0);
    expect((await beyond).counters.chunks_uploaded).toBe(3);
  });

  it('when status keeps being asked, then one read starts behind the answers every 0.8 s and no call waits for it', async () => {
    const t = await primed();
    await t.other.update({ last_error: 'theirs' });

    t.advance(801);
    const answered = await Promise.all([t.snapshot.get(), t.snapshot.get(), t.snapshot.get()]);
    expect(answered.map((state) => state.last_error)).toEqual([null, null, null]);
    expect(t.pending()).toBe(1);
    await t.settle();
    t.advance(100);

    expect((await t.snapshot.get()).last_error).toBe('theirs');
    expect(t.reads()).toBe(2);
  });

  it('when no status is asked, then nothing is read however long', async () => {
    const t = await primed();
    t.advance(60_000);
    expect(t.reads()).toBe(1);
    const late = t.snapshot.get();
    await t.settle();
    await late;
    expect(t.reads()).toBe(2);
  });

  it('when the read in flight started over a second before a call, then the call waits for one more after it, shared by every such call', async () => {
    const t = await primed();
    t.advance(900);
    await t.snapshot.get(); // a read behind, which hangs
    await t.other.update({ last_error: 'after the hung read started' });
    t.advance(2000);

    const late = [t.snapshot.get(), t.snapshot.get()];
    await t.settle();

    expect((await Promise.all(late)).map((state) => state.last_error)).toEqual([
      'after the hung read started',
      'after the hung read started',
    ]);
    expect(t.reads()).toBe(3);
    expect(t.mostInFlight()).toBe(1);
  });

  it('when the store is unreachable, then calls past the bound fail with its error as a direct read did, calls within it are answered, and a later call reads again', async () => {
    const t = await primed();
    const outage = new StoreUnavailableError('archive state store unreachable');
    t.failWith(outage);
    t.advance(900);
    expect((await t.snapshot.get()).last_error).toBeNull(); // its read behind fails unseen
    await t.settle();

    t.advance(200);
    const failing = [t.snapshot.get(), t.snapshot.get()].map((call) =>
      call.then(
        () => 'answered',
        (error: unknown) => error,
      ),
    );
    await t.settle();
    expect(await Promise.all(failing)).toEqual([outage, outage]);

    t.failWith(undefined);
    const back = t.snapshot.get();
    await t.settle();
    await expect(back).resolves.toMatchObject({ last_error: null });
    expect(t.reads()).toBe(4);
  });

  it('when no state was read yet and the store is unreachable, then the first call fails with its error', async () => {
    const t = setup();
    const outage = new StoreUnavailableError('archive state store unreachable');
    t.failWith(outage);
    const first = t.snapshot.get().then(
      () => 'answered',
      (error: unknown) => error,
    );
    await t.settle();
    expect(await first).toBe(outage);
  });
});
