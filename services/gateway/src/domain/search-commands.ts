import {
  AppError,
  StoreUnavailableError,
  TimeoutError,
  createEnvelope,
  queueNames,
  searchTimings,
  validators,
  type SearchAnswer,
  type SearchParameters,
  type SearchReply,
  type SearchRequest,
} from '@screenfleet/contracts';
import type { Bus } from '@screenfleet/bus';
import type { SearchMetrics } from '../metrics';
import { HttpError } from './http-error';

/** How long a client should wait before asking again after a 503 (as for broker outages). */
const RETRY_AFTER_SECONDS = '5';

/**
 * The search.rpc request for a parsed query, or undefined when nothing can match (only types we
 * never store were asked for, or a token bound to no device): answered without asking a worker.
 */
export function toSearchRequest(
  parameters: SearchParameters,
  devices: readonly string[] | undefined,
): SearchRequest | undefined {
  const [first, ...more] = parameters.contentTypes;
  if (first === undefined || devices?.length === 0) return undefined;
  return {
    q: parameters.q,
    content_types: [first, ...more],
    ...(parameters.from ? { from: parameters.from.toISOString() } : {}),
    ...(parameters.to ? { to: parameters.to.toISOString() } : {}),
    ...(devices ? { devices: [...devices] } : {}),
    ...(parameters.appName !== undefined ? { app_name: parameters.appName } : {}),
    ...(parameters.windowName !== undefined ? { window_name: parameters.windowName } : {}),
    ...(parameters.minLength !== undefined ? { min_length: parameters.minLength } : {}),
    ...(parameters.maxLength !== undefined ? { max_length: parameters.maxLength } : {}),
    ...(parameters.maxContentLength !== undefined
      ? { max_content_length: parameters.maxContentLength }
      : {}),
    order: parameters.order,
    limit: parameters.limit,
    offset: parameters.offset,
  };
}

/** The answer to a search nothing can match. */
export function emptyAnswer(parameters: Pick<SearchParameters, 'limit' | 'offset'>): SearchAnswer {
  return { data: [], pagination: { limit: parameters.limit, offset: parameters.offset, total: 0 } };
}

type Refusal = Extract<SearchReply, { outcome: 'refused' }>;

/**
 * Asks the ingest workers over `search.rpc` and returns their answer, or throws what the client
 * should see: 503 when no worker answered in time, the broker is down, the store is unreachable
 * or the store stopped the search at its budget; 502 when the reply breaks the contract or the
 * worker refused a request the gateway built (a version mismatch: not the client's fault); 500
 * when the search failed in the worker. The timeout is split (searchTimings): a search nobody
 * took in time expires unrun, and one that runs is stopped by the store before the gateway
 * gives up on it.
 */
export async function sendSearch(
  bus: Pick<Bus, 'call'>,
  request: SearchRequest,
  options: { timeoutMs: number; requestId: string; metrics: SearchMetrics },
): Promise<SearchAnswer> {
  const stop = options.metrics.callDuration.startTimer();
  let result = 'ok';
  try {
    const timings = searchTimings(options.timeoutMs);
    const envelope = createEnvelope(
      'search.request',
      { ...request, budget_ms: timings.budgetMs },
      { correlationId: options.requestId },
    );
    const reply = await callWorkers(bus, envelope, options.timeoutMs, timings.expirationMs);
    const payload = readReply(reply.type, reply.payload);
    if (payload.outcome === 'refused') {
      result = payload.code;
      throw refusalError(payload);
    }
    return payload.answer;
  } catch (error) {
    if (result === 'ok') result = resultLabel(error);
    throw error;
  } finally {
    stop();
    options.metrics.calls.inc({ result });
  }
}

async function callWorkers(
  bus: Pick<Bus, 'call'>,
  request: ReturnType<typeof createEnvelope>,
  timeoutMs: number,
  expirationMs: number,
) {
  try {
    return await bus.call<unknown>(queueNames.searchRpc, request, { timeoutMs, expirationMs });
  } catch (error) {
    if (error instanceof TimeoutError) {
      throw new HttpError(
        503,
        'search_timeout',
        `no ingest worker answered the search within ${timeoutMs} ms (is an ingest worker running?)`,
        [],
        { 'Retry-After': RETRY_AFTER_SECONDS },
      );
    }
    // The bus could not read the reply at all (not an envelope).
    if (error instanceof AppError && error.code === 'operation_failed') {
      throw invalidReply(error.message);
    }
    throw error;
  }
}

function readReply(type: string, payload: unknown): SearchReply {
  if (type !== 'search.reply') throw invalidReply(`a ${type} message instead of search.reply`);
  // check() also drops fields the contract does not know, so the answer is relayed exactly.
  const errors = validators.searchReply.check(payload);
  if (errors.length > 0) {
    throw invalidReply(
      errors
        .slice(0, 3)
        .map((e) => `${e.path} ${e.detail}`)
        .join('; '),
    );
  }
  return payload as SearchReply;
}

function refusalError({ code, message }: Refusal): Error {
  switch (code) {
    case 'store_unavailable':
      return new StoreUnavailableError(`the content store is unavailable: ${message}`);
    case 'deadline_exceeded':
      return new HttpError(
        503,
        'search_deadline_exceeded',
        `the search was stopped at its deadline: ${message}; narrow it (a time range, more words) or try again`,
        [],
        { 'Retry-After': RETRY_AFTER_SECONDS },
      );
    case 'validation_failed':
      return new HttpError(
        502,
        'search_refused',
        `the ingest worker refused the search request: ${message}`,
      );
    case 'failed':
      return new AppError('operation_failed', message);
  }
}

function invalidReply(detail: string): HttpError {
  return new HttpError(
    502,
    'search_invalid_reply',
    `the ingest worker sent an invalid search reply: ${detail}`,
  );
}

function resultLabel(error: unknown): string {
  if (error instanceof HttpError) {
    return error.reason === 'search_timeout' ? 'timeout' : 'invalid_reply';
  }
  if (error instanceof AppError) return error.code;
  return 'error';
}
