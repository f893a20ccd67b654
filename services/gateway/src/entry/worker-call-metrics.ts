import { AppError } from '@screenfleet/contracts';
import type { Counter, Histogram } from 'prom-client';

/** A call to the workers' metrics: its duration, and calls by result. */
export interface WorkerCallMetrics<L extends string> {
  calls: Counter<L | 'result'>;
  callDuration: Histogram<L>;
}

/**
 * Times `call` and counts it by result: `ok`, or the code of the error it threw (the worker's
 * refusal, worker_unavailable, broker_unavailable, bad_gateway...): bounded, since codes are.
 */
export async function countedCall<T, L extends string>(
  metrics: WorkerCallMetrics<L>,
  labels: Partial<Record<L, string>>,
  call: () => Promise<T>,
): Promise<T> {
  const stop = metrics.callDuration.startTimer(labels);
  let result = 'ok';
  try {
    return await call();
  } catch (error) {
    result = error instanceof AppError ? error.code : 'error';
    throw error;
  } finally {
    stop();
    metrics.calls.inc({ ...labels, result } as Partial<Record<L | 'result', string>>);
  }
}
