import { StoreUnavailableError } from '@screenfleet/contracts';
import type { ContentStore, InsertResult, NewContentDocument } from '@screenfleet/storage';

/** Per message: written (or already stored), or the error that kept it from being written. */
export type MessageOutcome = { written: true } | { written: false; error: unknown };

export interface WriteReport {
  outcomes: MessageOutcome[];
  totals: InsertResult;
}

export interface RetryPolicy {
  /** Delay before the n-th retry (1-based). */
  delayMs(attempt: number): number;
  /** False once the worker is stopping: give the messages back instead of waiting on. */
  keepTrying(): boolean;
  onRetry(error: unknown, attempt: number): void;
}

/**
 * Writes the documents of several messages in one insert. A store outage is waited out with
 * backoff (nothing is acked, nothing dead-lettered: the messages are good). Any other failure
 * is narrowed to the message that causes it by writing each message's documents alone.
 */
export async function writeBatches(
  store: Pick<ContentStore, 'insertItems'>,
  groups: NewContentDocument[][],
  retry: RetryPolicy,
): Promise<WriteReport> {
  try {
    const totals = await untilAvailable(() => store.insertItems(groups.flat()), retry);
    return { outcomes: groups.map(() => ({ written: true })), totals };
  } catch (error) {
    if (error instanceof StoreUnavailableError || groups.length === 1) {
      return {
        outcomes: groups.map(() => ({ written: false, error })),
        totals: { inserted: 0, alreadyStored: 0 },
      };
    }
  }
  const report: WriteReport = { outcomes: [], totals: { inserted: 0, alreadyStored: 0 } };
  for (const group of groups) {
    try {
      const result = await untilAvailable(() => store.insertItems(group), retry);
      report.totals.inserted += result.inserted;
      report.totals.alreadyStored += result.alreadyStored;
      report.outcomes.push({ written: true });
    } catch (error) {
      report.outcomes.push({ written: false, error });
    }
  }
  return report;
}

async function untilAvailable<T>(write: () => Promise<T>, retry: RetryPolicy): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await write();
    } catch (error) {
      if (!(error instanceof StoreUnavailableError) || !retry.keepTrying()) throw error;
      retry.onRetry(error, attempt);
      await new Promise((resolve) => setTimeout(resolve, retry.delayMs(attempt)));
    }
  }
}
