import type { ArchiveSettings } from '@screenfleet/contracts';
import { createPendingCounter } from './pending-counter';

const settings: ArchiveSettings = { enabled: true, retention_days: 30, storage_limit: 1024 };

function setup() {
  let clock = 0;
  let pending = 100;
  const calls: Array<() => void> = [];
  const counter = createPendingCounter({
    // Each count resolves only when the test lets it, with the pending number at that moment.
    count: () => new Promise<number>((resolve) => calls.push(() => resolve(pending))),
    now: () => new Date(clock),
    maxAgeMs: 1000,
  });
  return {
    counter,
    calls,
    advance: (ms: number) => (clock += ms),
    setPending: (n: number) => (pending = n),
    settle: async () => {
      calls.splice(0).forEach((resolve) => resolve());
      await new Promise((resolve) => setImmediate(resolve));
    },
  };
}

describe('pending count for status calls', () => {
  it('when many calls come within a second, then one count serves them all', async () => {
    const t = setup();
    const first = t.counter.get(settings);
    const second = t.counter.get(settings);
    await t.settle();

    expect(await Promise.all([first, second])).toEqual([100, 100]);
    t.advance(500);
    expect(await t.counter.get(settings)).toBe(100);
    expect(t.calls).toHaveLength(0);
  });

  it('when the count is older than a second, then it is answered at once and a fresh one replaces it', async () => {
    const t = setup();
    const first = t.counter.get(settings);
    await t.settle();
    await first;
    t.setPending(60);
    t.advance(1500);

    // Answered without waiting for the new count, which starts once however many ask.
    expect(await t.counter.get(settings)).toBe(100);
    expect(await t.counter.get(settings)).toBe(100);
    expect(t.calls).toHaveLength(1);
    await t.settle();

    expect(await t.counter.get(settings)).toBe(60);
  });

  it('when the worker changed the content itself, then the next call waits for a new count', async () => {
    const t = setup();
    const first = t.counter.get(settings);
    await t.settle();
    await first;
    t.setPending(0);

    t.counter.invalidate();
    const after = t.counter.get(settings);
    await t.settle();

    expect(await after).toBe(0);
  });

  it('when the retention changes, then the count is not reused', async () => {
    const t = setup();
    const first = t.counter.get(settings);
    await t.settle();
    await first;
    t.setPending(7);

    const other = t.counter.get({ ...settings, retention_days: 1 });
    await t.settle();

    expect(await other).toBe(7);
  });
});
