import { StoreUnavailableError } from '@screenfleet/contracts';
import type { ContentDocument, InsertResult } from '@screenfleet/storage';
import { writeBatches, type RetryPolicy } from './write-batches';

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
