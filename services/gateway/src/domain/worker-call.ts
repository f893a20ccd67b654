import {
  AppError,
  BadGatewayError,
  TimeoutError,
  WorkerUnavailableError,
  type Envelope,
  type MessageType,
  type Validator,
} from '@screenfleet/contracts';
import type { Bus } from '@screenfleet/bus';

/** A request to the workers that serve one queue, and what their reply must be. */
export interface WorkerCall<R> {
  queue: string;
  /** Who serves it, for messages: "the archive worker", "an ingest worker". */
  worker: string;
  request: Envelope;
  replyType: MessageType;
  /** The reply's contract; check() also drops fields it does not know, so it is relayed exactly. */
  reply: Validator<R>;
  timeoutMs: number;
  /** How long the request may wait to be taken (default timeoutMs): past it, it is never run. */
  expirationMs?: number;
}

/**
 * The metrics a worker call is counted on: a call counter by result and a duration histogram.
 * prom-client's Counter and Histogram fit it; the domain defines it, never imports prom-client.
 */
export interface WorkerCallMetrics<L extends string> {
  calls: { inc(labels: Partial<Record<L | 'result', string>>): void };
  callDuration: { startTimer(labels: Partial<Record<L, string>>): () => unknown };
}

/**
 * Asks the workers serving `call.queue` (the gateway holds no store of its own: ADR 0008) and
 * returns their reply's payload, checked. Throws what the client should see: no answer in time
 * -> WorkerUnavailableError (503, ask again later), the broker down -> BrokerUnavailableError
 * (503), a reply that breaks the contract -> BadGatewayError (502).
 */
export async function callWorkers<R>(bus: Pick<Bus, 'call'>, call: WorkerCall<R>): Promise<R> {
  let reply: Envelope<unknown>;
  try {
    reply = await bus.call<unknown>(call.queue, call.request, {
      timeoutMs: call.timeoutMs,
      ...(call.expirationMs !== undefined ? { expirationMs: call.expirationMs } : {}),
    });
  } catch (error) {
    if (error instanceof TimeoutError) {
      throw new WorkerUnavailableError(
        `no answer from ${call.worker} within ${call.timeoutMs} ms (is one running?)`,
      );
    }
    // The bus could not read the reply at all (not an envelope).
    if (error instanceof AppError && error.code === 'operation_failed') {
      throw invalidReply(call.worker, error.message);
    }
    throw error;
  }
  if (reply.type !== call.replyType) {
    throw invalidReply(call.worker, `a ${reply.type} message instead of ${call.replyType}`);
  }
  const errors = call.reply.check(reply.payload);
  if (errors.length > 0) {
    // A detail names its field or not ("outcome is required", "must be string").
    const details = errors
      .slice(0, 3)
      .map((e) => (e.detail.startsWith(e.path) ? e.detail : `${e.path} ${e.detail}`));
    throw invalidReply(call.worker, details.join('; '));
  }
  return reply.payload as R;
}

/**
 * Times `call` (a callWorkers and what its user makes of the reply) and counts it by result:
 * `ok`, or the code of the error it threw (the worker's refusal, worker_unavailable,
 * broker_unavailable, bad_gateway...): bounded, since codes are.
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

export function invalidReply(worker: string, detail: string): BadGatewayError {
  return new BadGatewayError(`${worker} sent an invalid reply: ${detail}`);
}
