import {
  AppError,
  checkMessage,
  TimeoutError,
  createEnvelope,
  limits,
  searchTerms,
  sizeLimits,
  validators,
  type Envelope,
  type SearchReply,
  type SearchRequest,
} from '@screenfleet/contracts';
import type { Logger } from '@screenfleet/runtime';
import type { ContentStore, SearchQuery } from '@screenfleet/storage';
import { toSearchAnswer } from '../domain/search-answer';
import type { IngestMetrics } from '../metrics';

/** Room in a reply message for the envelope around the answer (ids, times, `outcome`). */
const ENVELOPE_BYTES = 4096;
/** The answer's JSON at most: a reply over the broker's message limit closes the channel. */
export const SEARCH_REPLY_MAX_BYTES = sizeLimits.maxMessageBytes - ENVELOPE_BYTES;

export interface SearchRpcDeps {
  store: Pick<ContentStore, 'search'>;
  metrics: IngestMetrics;
  logger: Logger;
  /** Default SEARCH_REPLY_MAX_BYTES; tests make it small. */
  maxReplyBytes?: number;
}

type Refusal = Extract<SearchReply, { outcome: 'refused' }>;

/**
 * Translates search.request messages on search.rpc into replies; every request is answered:
 * with the page, or with why not (the store unreachable: `store_unavailable`; the store stopped
 * the search at the request's budget_ms, counted from now: `deadline_exceeded`; both answered
 * 503 by the gateway; a request that breaks the contract: `validation_failed`).
 */
export function createSearchRpcHandler({ store, metrics, logger, maxReplyBytes }: SearchRpcDeps) {
  return async (request: Envelope<unknown>): Promise<Envelope<SearchReply>> => {
    const stop = metrics.searchDuration.startTimer();
    const reply = await answer(request);
    stop();
    const outcome = reply.outcome === 'ok' ? 'ok' : reply.code;
    metrics.searches.inc({ outcome });
    logger.debug(
      {
        requestId: request.correlation_id,
        outcome,
        ...(reply.outcome === 'ok'
          ? { results: reply.answer.data.length, total: reply.answer.pagination.total }
          : {}),
      },
      'search answered',
    );
    return createEnvelope('search.reply', reply, { correlationId: request.correlation_id });
  };

  async function answer(request: Envelope<unknown>): Promise<SearchReply> {
    const errors = checkMessage(request, 'search.request', validators.searchRequest);
    if (errors.length > 0) {
      return refuse('validation_failed', errors.map((error) => error.detail).join('; '));
    }
    const search = request.payload as SearchRequest;
    const deadline =
      search.budget_ms === undefined ? Infinity : performance.now() + search.budget_ms;
    try {
      const result = await store.search(toStoreQuery(search), {
        maxBytes: limits.searchPageMaxBytes,
        ...(search.budget_ms === undefined ? {} : { timeoutMs: search.budget_ms }),
      });
      // The budget is the request's to the end: an answer made past it would come too late.
      if (performance.now() > deadline) {
        throw new TimeoutError(
          `the search's page was read past its deadline (${search.budget_ms} ms)`,
        );
      }
      return {
        outcome: 'ok',
        answer: toSearchAnswer(result, search, maxReplyBytes ?? SEARCH_REPLY_MAX_BYTES),
      };
    } catch (error) {
      if (error instanceof TimeoutError) {
        logger.warn(
          { requestId: request.correlation_id, budgetMs: search.budget_ms },
          'search: stopped at its deadline',
        );
        return refuse('deadline_exceeded', error.message);
      }
      if (error instanceof AppError && error.code === 'store_unavailable') {
        logger.warn({ err: error, requestId: request.correlation_id }, 'search: store unavailable');
        return refuse('store_unavailable', error.message);
      }
      logger.error({ err: error, requestId: request.correlation_id }, 'search failed');
      // The cause stays in this log: a driver's message is no business of an HTTP client.
      return refuse('failed', 'the search failed in the ingest worker (its log says why)');
    }
  }
}

/**
 * A resolved search.request as the store's query. The gateway resolved every decision (times,
 * the token's devices); what is left is splitting `q` into the normalised terms the stores index,
 * a translation, so it lives with the entry point.
 */
export function toStoreQuery(request: SearchRequest): SearchQuery {
  return {
    terms: searchTerms(request.q),
    contentTypes: request.content_types,
    ...(request.from !== undefined ? { from: new Date(request.from) } : {}),
    ...(request.to !== undefined ? { to: new Date(request.to) } : {}),
    ...(request.devices !== undefined ? { devices: request.devices } : {}),
    ...(request.app_name !== undefined ? { appName: request.app_name } : {}),
    ...(request.window_name !== undefined ? { windowName: request.window_name } : {}),
    ...(request.min_length !== undefined ? { minLength: request.min_length } : {}),
    ...(request.max_length !== undefined ? { maxLength: request.max_length } : {}),
    order: request.order,
    limit: request.limit,
    offset: request.offset,
  };
}

function refuse(code: Refusal['code'], message: string): Refusal {
  return { outcome: 'refused', code, message };
}
