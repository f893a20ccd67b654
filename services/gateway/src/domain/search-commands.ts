import {
  AppError,
  BadGatewayError,
  DeadlineExceededError,
  StoreUnavailableError,
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
import { callWorkers } from './worker-call';

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
 * should see: callWorkers' errors (503 when no worker answered in time or the broker is down,
 * 502 when the reply breaks the contract), 503 when the store is unreachable or stopped the
 * search at its budget, 502 when the worker refused a request the gateway built (a version
 * mismatch: not the client's fault), 500 when the search failed in the worker. The timeout is
 * split (searchTimings): a search nobody took in time expires unrun, and one that runs is
 * stopped by the store before the gateway gives up on it.
 */
export async function sendSearch(
  bus: Pick<Bus, 'call'>,
  request: SearchRequest,
  options: { timeoutMs: number; requestId: string },
): Promise<SearchAnswer> {
  const timings = searchTimings(options.timeoutMs);
  const reply = await callWorkers<SearchReply>(bus, {
    queue: queueNames.searchRpc,
    worker: 'an ingest worker',
    request: createEnvelope(
      'search.request',
      { ...request, budget_ms: timings.budgetMs },
      { correlationId: options.requestId },
    ),
    replyType: 'search.reply',
    reply: validators.searchReply,
    timeoutMs: options.timeoutMs,
    expirationMs: timings.expirationMs,
  });
  if (reply.outcome === 'refused') throw refusalError(reply);
  return reply.answer;
}

function refusalError({ code, message }: Refusal): Error {
  switch (code) {
    case 'store_unavailable':
      return new StoreUnavailableError(`the content store is unavailable: ${message}`);
    case 'deadline_exceeded':
      return new DeadlineExceededError(
        `the search was stopped at its deadline: ${message}; narrow it (a time range, more words) or try again`,
      );
    case 'validation_failed':
      return new BadGatewayError(`the ingest worker refused the search request: ${message}`);
    case 'failed':
      return new AppError('operation_failed', message);
  }
}
