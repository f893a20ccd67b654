import { WorkerUnavailableError, type NewestItemTimes } from '@screenfleet/contracts';
import { HealthSummaries, type SummaryResult } from './health-summary';

/** A read the test settles when it wants, and what it was asked. */
interface PendingRead {
  devices: readonly string[] | undefined;
  resolve(times: NewestItemTimes): void;
  reject(error: unknown): void;
}

/** Summaries over a fake clock and reads that wait for the test. */
function summariesWith(options: { maxStaleMs?: number; maxEntries?: number } = {}) {
  const clock = { ms: 1_000_000 };
  const reads: PendingRead[] = [];
  const summaries = new HealthSummaries({
    read: (devices) =>
      new Promise<NewestItemTimes>((resolve, reject) => reads.push({ devices, resolve, reject })),
    maxAgeMs: 1000,
    errorMaxAgeMs: 250,
    now: () => clock.ms,
    ...options,
  });
  return { summaries, reads, clock };
}

const times = (frames: number): NewestItemTimes => ({ frames, transcription: null });
const ok = (frames: number): SummaryResult => ({ ok: true, newest: times(frames) });
/** Lets every settled promise's callbacks run (the queue's next read starts in one). */
const settled = () => new Promise((resolve) => setImmediate(resolve));

describe('HealthSummaries', () => {
  it('when many callers ask at once, then one read serves them all', async () => {
    const { summaries, reads } = summariesWith();

    const answers = Array.from({ length: 16 }, () => summaries.get(undefined));
    await settled();
    expect(reads).toHaveLength(1);
    reads[0]?.resolve(times(1));

    expect(await Promise.all(answers)).toEqual(Array.from({ length: 16 }, () => ok(1)));
    expect(reads).toHaveLength(1);
  });

  it('when the summary is younger than the max age, then it is served without a read; older, then one read refreshes it', async () => {
    const { summaries, reads, clock } = summariesWith();
    const first = summaries.get(undefined);
    await settled();
    reads[0]?.resolve(times(1));
    await first;

    clock.ms += 999;
    expect(await summaries.get(undefined)).toEqual(ok(1));
    await settled();
    expect(reads).toHaveLength(1);

    clock.ms += 1;
    await summaries.get(undefined);
    await summaries.get(undefined);
    await settled();
    expect(reads).toHaveLength(2);
  });

  it('when a refresh is under way, then callers get the last summary at once, and the new one once it is read', async () => {
    const { summaries, reads, clock } = summariesWith();
    const first = summaries.get(undefined);
    await settled();
    reads[0]?.resolve(times(1));
    await first;

    clock.ms += 1500;
    // Not awaited on the read: these resolve while the refresh is still pending.
    expect(await summaries.get(undefined)).toEqual(ok(1));
    expect(await summaries.get(undefined)).toEqual(ok(1));
    await settled();
    expect(reads).toHaveLength(2);
    reads[1]?.resolve(times(2));
    await settled();

    expect(await summaries.get(undefined)).toEqual(ok(2));
    expect(reads).toHaveLength(2);
  });

  it('when a read is slow, then the next one starts the max age after it ended, never back to back', async () => {
    const { summaries, reads, clock } = summariesWith();
    const first = summaries.get(undefined);
    await settled();
    clock.ms += 1500; // the store takes 1.5 s to answer
    reads[0]?.resolve(times(1));
    await first;

    clock.ms += 999;
    await summaries.get(undefined);
    await settled();
    expect(reads).toHaveLength(1);
    clock.ms += 1;
    await summaries.get(undefined);
    await settled();
    expect(reads).toHaveLength(2);
  });

  it('when the last summary is older than the stale limit (an idle spell), then callers wait for the refresh', async () => {
    const { summaries, reads, clock } = summariesWith({ maxStaleMs: 10_000 });
    const first = summaries.get(undefined);
    await settled();
    reads[0]?.resolve(times(1));
    await first;

    clock.ms += 60_000;
    const waiting = summaries.get(undefined);
    let answered = false;
    void waiting.then(() => (answered = true));
    await settled();
    expect(answered).toBe(false);
    reads[1]?.resolve(times(2));

    expect(await waiting).toEqual(ok(2));
  });

  it('when a read fails, then its callers get the error, kept only for the short error age, and the next read may succeed', async () => {
    const { summaries, reads, clock } = summariesWith();
    const failure = new WorkerUnavailableError('no answer from an ingest worker within 2000 ms');
    const first = summaries.get(undefined);
    await settled();
    reads[0]?.reject(failure);
    expect(await first).toEqual({ ok: false, error: failure });

    clock.ms += 249;
    expect(await summaries.get(undefined)).toEqual({ ok: false, error: failure });
    await settled();
    expect(reads).toHaveLength(1);

    clock.ms += 1;
    void summaries.get(undefined);
    await settled();
    expect(reads).toHaveLength(2);
    reads[1]?.resolve(times(3));
    await settled();
    expect(await summaries.get(undefined)).toEqual(ok(3));
  });

  it('when device sets differ, then each has its own summary (the same set in any order is one), read one at a time', async () => {
    const { summaries, reads } = summariesWith();

    const fleet = summaries.get(undefined);
    const bound = summaries.get(['desk-2', 'desk-1']);
    const same = summaries.get(['desk-1', 'desk-2', 'desk-1']);
    await settled();
    // One read in flight for the whole gateway: the bound set's waits for the fleet's.
    expect(reads.map((r) => r.devices)).toEqual([undefined]);
    reads[0]?.resolve(times(1));
    await settled();
    expect(reads.map((r) => r.devices)).toEqual([undefined, ['desk-2', 'desk-1']]);
    reads[1]?.resolve(times(2));

    expect(await fleet).toEqual(ok(1));
    expect(await bound).toEqual(ok(2));
    expect(await same).toEqual(ok(2));
    expect(reads).toHaveLength(2);
  });

  it('when more device sets ask than it keeps, then the oldest is forgotten and read again when asked', async () => {
    const { summaries, reads } = summariesWith({ maxEntries: 2 });
    for (const devices of [['a'], ['b'], ['c']]) {
      const answer = summaries.get(devices);
      await settled();
      reads.at(-1)?.resolve(times(reads.length));
      await answer;
    }

    void summaries.get(['c']);
    await settled();
    expect(reads).toHaveLength(3);
    void summaries.get(['a']);
    await settled();
    expect(reads).toHaveLength(4);
  });
});
