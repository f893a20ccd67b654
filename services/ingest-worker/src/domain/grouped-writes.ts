import { StoreUnavailableError } from '@screenfleet/contracts';
import type { InsertResult } from '@screenfleet/storage';

// Grouping and writing are one step of POST /add's path: the consumer adds each message's
// documents to a micro-batcher whose flush is writeBatches, and each add() resolves with that
// message's outcome.

/**
 * Groups work arriving one message at a time into fewer, larger writes: a flush happens when
 * the pending weight (items) reaches maxWeight or maxWaitMs after the first addition. Each
 * add() resolves with the result the flush gave to that entry, so every message keeps its own
 * outcome. The prefetch window bounds how much can be pending.
 */
export interface MicroBatcherOptions {
  maxWeight: number;
  maxWaitMs: number;
}

interface Pending<T, R> {
  value: T;
  resolve: (result: R) => void;
  reject: (error: unknown) => void;
}

export interface MicroBatcher<T, R> {
  add(value: T, weight: number): Promise<R>;
  /** Flushes what is pending now and waits for every flush in progress. */
  drain(): Promise<void>;
}

export function createMicroBatcher<T, R>(
  flush: (values: T[]) => Promise<R[]>,
  options: MicroBatcherOptions,
): MicroBatcher<T, R> {
  let pending: Array<Pending<T, R>> = [];
  let weight = 0;
  let timer: NodeJS.Timeout | undefined;
  const inFlight = new Set<Promise<void>>();

  function flushNow(): void {
    if (timer) clearTimeout(timer);
    timer = undefined;
    if (pending.length === 0) return;
    const batch = pending;
    pending = [];
    weight = 0;
    const run = flush(batch.map((entry) => entry.value)).then(
      (results) => batch.forEach((entry, i) => entry.resolve(results[i] as R)),
      (error: unknown) => batch.forEach((entry) => entry.reject(error)),
    );
    inFlight.add(run);
    void run.finally(() => inFlight.delete(run));
  }

  return {
    add(value, valueWeight) {
      return new Promise<R>((resolve, reject) => {
        pending.push({ value, resolve, reject });
        weight += valueWeight;
        if (weight >= options.maxWeight) flushNow();
        else timer ??= setTimeout(flushNow, options.maxWaitMs);
      });
    },
    async drain() {
      flushNow();
      await Promise.allSettled([...inFlight]);
    },
  };
}

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

/** A store's idempotent insert: content items, or audit rows (the same counts come back). */
export interface GroupedStore<T> {
  insertItems(items: T[]): Promise<InsertResult>;
}

/**
 * Writes the documents of several messages in one insert. A store outage is waited out with
 * backoff (nothing is acked, nothing dead-lettered: the messages are good). Any other failure
 * is narrowed to the message that causes it by writing each message's documents alone.
 */
export async function writeBatches<T>(
  store: GroupedStore<T>,
  groups: T[][],
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
