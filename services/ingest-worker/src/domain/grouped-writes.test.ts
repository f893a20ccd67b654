import { StoreUnavailableError } from '@screenfleet/contracts';
import type { ContentDocument, InsertResult } from '@screenfleet/storage';
import { createMicroBatcher, writeBatches, type RetryPolicy } from './grouped-writes';

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

// A fake store is enough here: this is the retry and narrowing logic, not the database.
const doc = (id: string) => ({ _id: id }) as ContentDocument;
const policy = (keepTrying = () => true): RetryPolicy & { retries: number } => {
  const p = { retries: 0, delayMs: () => 1, keepTrying, onRetry: () => void (p.retries += 1) };
  return p;
};

describe('writeBatches', () => {
  it('when the store is briefly unavailable, then the insert is retried and every message written', async () => {
    let calls = 0;
    const store = {
      insertItems: async (docs: ContentDocument[]): Promise<InsertResult> => {
        calls += 1;
        if (calls <= 2) throw new StoreUnavailableError('down');
        return { inserted: docs.length, alreadyStored: 0 };
      },
    };
    const retry = policy();

    const report = await writeBatches(store, [[doc('a')], [doc('b'), doc('c')]], retry);

    expect(report).toEqual({
      outcomes: [{ written: true }, { written: true }],
      totals: { inserted: 3, alreadyStored: 0 },
    });
    expect(retry.retries).toBe(2);
  });

  it('when the worker stops during an outage, then the messages are reported unwritten (to be redelivered)', async () => {
    const store = { insertItems: () => Promise.reject(new StoreUnavailableError('down')) };
    const report = await writeBatches(
      store,
      [[doc('a')], [doc('b')]],
      policy(() => false),
    );
    expect(report.outcomes.map((o) => o.written)).toEqual([false, false]);
  });

  it('when one message cannot be written, then only that message fails and the others are written', async () => {
    const store = {
      insertItems: async (docs: ContentDocument[]): Promise<InsertResult> => {
        if (docs.some((d) => d._id === 'bad')) throw new Error('document too large');
        return { inserted: docs.length - 1, alreadyStored: 1 };
      },
    };

    const report = await writeBatches(
      store,
      [[doc('a'), doc('b')], [doc('bad')], [doc('c'), doc('d')]],
      policy(),
    );

    expect(report.outcomes.map((o) => o.written)).toEqual([true, false, true]);
    expect(report.totals).toEqual({ inserted: 2, alreadyStored: 2 });
  });
});
