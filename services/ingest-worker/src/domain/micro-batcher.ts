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
