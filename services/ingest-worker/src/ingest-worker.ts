import { createEnvelope, exchangeNames, queueNames, type Envelope } from '@screenfleet/contracts';
import type { Bus, Subscription } from '@screenfleet/bus';
import {
  backoffDelay,
  type BackoffOptions,
  type Logger,
  type Registry,
} from '@screenfleet/runtime';
import type { AuditStore, ContentStore, TokenStore } from '@screenfleet/storage';
import { createAuditConsumer } from './entry/audit.consumer';
import { createAuditRpcHandler } from './entry/audit.rpc';
import { createContentBatchConsumer } from './entry/content-batch.consumer';
import { createDevicesRpcHandler } from './entry/devices.rpc';
import { createSearchRpcHandler } from './entry/search.rpc';
import { createTokensRpcHandler } from './entry/tokens.rpc';
import type { MicroBatcherOptions, RetryPolicy } from './domain/grouped-writes';
import { createTokenAdmin } from './domain/token-admin';
import { createIngestMetrics } from './metrics';

/**
 * tokens.rpc requests answered at once: each is a store read or a small write, and a snapshot
 * every gateway asks after each change should not queue behind one slow write.
 */
export const TOKENS_PREFETCH = 8;
/** audit.record messages taken at once, written together (rows are small). */
export const AUDIT_PREFETCH = 50;

export interface IngestWorkerDeps {
  bus: Pick<Bus, 'consume' | 'queueDepth' | 'serve' | 'publish'>;
  store: Pick<
    ContentStore,
    | 'insertItems'
    | 'ensureIndexes'
    | 'search'
    | 'deviceCounters'
    | 'deviceListing'
    | 'newestItemTimes'
  >;
  /** Tokens and enrolment codes (ADR 0019), served on tokens.rpc. */
  tokenStore: TokenStore;
  /** Audit rows, written from audit.v1 and by token changes, read by audit.request. */
  auditStore: AuditStore;
  logger: Logger;
  registry: Registry;
  prefetch: number;
  /** Bytes of message bodies handled at once (see INGEST_MAX_BYTES_IN_FLIGHT). */
  maxBytesInFlight?: number;
  grouping: MicroBatcherOptions;
  retry: BackoffOptions;
  /** search.rpc requests answered at once (see INGEST_SEARCH_PREFETCH). */
  searchPrefetch: number;
  /** CAPTURE_STALL_AFTER, for the per-device stall gauge (default 5 min). */
  captureStallAfterMs?: number;
}

export interface IngestWorker {
  /**
   * Serves tokens.rpc and consumes audit records, serves search.rpc (searches, devices, audit
   * reads), then consumes content batches.
   */
  start(): Promise<void>;
  /**
   * Stops taking messages and requests; batches and audit records in hand are written and
   * acked (or given back when the store is down), requests in hand are answered.
   */
  stop(): Promise<void>;
}

export function createIngestWorker(deps: IngestWorkerDeps): IngestWorker {
  const logger = deps.logger.child({ component: 'ingest' });
  const metrics = createIngestMetrics(deps.registry, (queue) => deps.bus.queueDepth(queue), {
    listing: () => deps.store.deviceListing(),
    stallAfterMs: deps.captureStallAfterMs ?? 300_000,
  });
  let stopping = false;
  const stopped = new AbortController();
  let subscription: Subscription | undefined;
  let searching: Subscription | undefined;
  let tokensServing: Subscription | undefined;
  let auditing: Subscription | undefined;
  /** Store outages are waited out with backoff until the worker stops (grouped-writes.ts). */
  const retryPolicy = (store: string): RetryPolicy => ({
    delayMs: (attempt) => backoffDelay(deps.retry, attempt),
    keepTrying: () => !stopping,
    onRetry: (error, attempt) => {
      metrics.storeRetries.inc();
      logger.warn({ err: error, attempt }, `${store} unavailable; retrying`);
    },
  });
  const pauseBeforeRedelivery = (deliveryCount: number) =>
    pause(backoffDelay(deps.retry, deliveryCount + 1), stopped.signal);
  const consumer = createContentBatchConsumer({
    store: deps.store,
    metrics,
    logger,
    grouping: deps.grouping,
    retry: retryPolicy('content store'),
    pauseBeforeRedelivery,
  });
  const audit = createAuditConsumer({
    store: deps.auditStore,
    metrics,
    logger: logger.child({ component: 'audit' }),
    // At most a prefetch window per insert; none where the store groups writes itself.
    grouping: {
      maxWeight: Math.min(deps.grouping.maxWeight, AUDIT_PREFETCH),
      maxWaitMs: deps.grouping.maxWaitMs,
    },
    retry: retryPolicy('audit store'),
    pauseBeforeRedelivery,
  });
  const tokensLogger = logger.child({ component: 'tokens' });
  const tokenAdmin = createTokenAdmin({
    tokens: deps.tokenStore,
    audit: deps.auditStore,
    now: () => new Date(),
    // Gateways reload on each event; a lost one is made up by their reload every 30 s and on
    // every reconnect (ADR 0019), so a failed publish is logged, never fatal to the change.
    changed: (reason) =>
      deps.bus
        .publish(exchangeNames.tokensEvents, '', createEnvelope('tokens.changed', { reason }))
        .catch((error: unknown) => {
          tokensLogger.warn({ err: error, reason }, 'tokens.changed not published');
        }),
    observer: {
      auditWritten: (rows) => metrics.auditRowsWritten.inc(rows),
      auditNotWritten: (error, row) => {
        metrics.auditRowsNotWritten.inc();
        // The row itself, so that the trail can be completed from the log.
        tokensLogger.error({ err: error, row }, 'audit row of a token change not written');
      },
    },
  });

  return {
    async start() {
      await deps.store.ensureIndexes();
      await deps.tokenStore.ensureSchema();
      await deps.auditStore.ensureSchema();
      // Token administration and the gateways' snapshots: a consumer of their own, so a
      // gateway's snapshot never waits behind searches or batches.
      tokensServing = await deps.bus.serve(
        queueNames.tokensRpc,
        createTokensRpcHandler({ admin: tokenAdmin, metrics, logger: tokensLogger }),
        { prefetch: TOKENS_PREFETCH },
      );
      logger.info({ queue: queueNames.tokensRpc, prefetch: TOKENS_PREFETCH }, 'serving tokens');
      auditing = await deps.bus.consume(queueNames.audit, audit.handle, {
        prefetch: AUDIT_PREFETCH,
      });
      logger.info({ queue: queueNames.audit, prefetch: AUDIT_PREFETCH }, 'consuming audit records');
      // A consumer of its own, so a search never waits behind batches in the prefetch window
      // (and a slow search never holds a batch); first, so a started worker answers both.
      // search.rpc carries the store's reads: searches, the device counters (GET /devices) and
      // the audit trail (GET /audit), told apart by the request's type; an unknown type gets the
      // search handler's refusal.
      const search = createSearchRpcHandler({ store: deps.store, metrics, logger });
      const devices = createDevicesRpcHandler({ store: deps.store, logger });
      const auditRead = createAuditRpcHandler({ store: deps.auditStore, logger });
      searching = await deps.bus.serve(
        queueNames.searchRpc,
        (request): Promise<Envelope> =>
          request.type === 'devices.request'
            ? devices(request)
            : request.type === 'audit.request'
              ? auditRead(request)
              : search(request),
        { prefetch: deps.searchPrefetch },
      );
      logger.info(
        { queue: queueNames.searchRpc, prefetch: deps.searchPrefetch },
        'serving searches',
      );
      subscription = await deps.bus.consume(queueNames.ingestContent, consumer.handle, {
        prefetch: deps.prefetch,
        ...(deps.maxBytesInFlight ? { maxBytesInFlight: deps.maxBytesInFlight } : {}),
      });
      logger.info(
        { queue: queueNames.ingestContent, prefetch: deps.prefetch },
        'consuming content batches',
      );
    },
    async stop() {
      stopping = true;
      stopped.abort();
      const cancelled = subscription?.cancel();
      const searchesAnswered = searching?.cancel();
      const auditCancelled = auditing?.cancel();
      const tokensAnswered = tokensServing?.cancel();
      await consumer.drain();
      await audit.drain();
      await cancelled;
      await auditCancelled;
      await searchesAnswered;
      await tokensAnswered;
    },
  };
}

/** Resolves after `ms`, or at once when `signal` aborts. */
function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done);
  });
}
