import { createMicroBatcher } from './micro-batcher';

describe('micro-batcher', () => {
  it('when the weight limit is reached, then one flush gets every pending value and each caller its own result', async () => {
    const flushes: number[][] = [];
    const batcher = createMicroBatcher<number, string>(
      async (values) => {
        flushes.push(values);
        return values.map((v) => `r${v}`);
      },
      { maxWeight: 10, maxWaitMs: 60_000 },
    );

    const results = await Promise.all([batcher.add(1, 4), batcher.add(2, 4), batcher.add(3, 4)]);

    expect(flushes).toEqual([[1, 2, 3]]);
    expect(results).toEqual(['r1', 'r2', 'r3']);
  });

  it('when the wait elapses first, then what is pending is flushed', async () => {
    const batcher = createMicroBatcher<number, number>(async (values) => values.map((v) => v * 2), {
      maxWeight: 100,
      maxWaitMs: 5,
    });
    await expect(batcher.add(21, 1)).resolves.toBe(42);
  });

  it('when a flush fails, then every caller of that flush gets the error', async () => {
    const batcher = createMicroBatcher<number, number>(() => Promise.reject(new Error('boom')), {
      maxWeight: 2,
      maxWaitMs: 60_000,
    });
    const results = await Promise.allSettled([batcher.add(1, 1), batcher.add(2, 1)]);
    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected']);
  });

  it('when drained, then pending values are flushed without waiting for the timer', async () => {
    const flushed: number[] = [];
    const batcher = createMicroBatcher<number, number>(
      async (values) => {
        flushed.push(...values);
        return values;
      },
      { maxWeight: 100, maxWaitMs: 60_000 },
    );
    const pending = batcher.add(7, 1);
    await batcher.drain();
    expect(flushed).toEqual([7]);
    await expect(pending).resolves.toBe(7);
  });
});
