import { queueNames, type Envelope } from '@screenfleet/contracts';
import type { Bus, Subscription } from '@screenfleet/bus';
import {
  backoffDelay,
  type BackoffOptions,
  type Logger,
  type Registry,
} from '@screenfleet/runtime';
import type { ContentStore } from '@screenfleet/storage';
import { createContentBatchConsumer } from './entry/content-batch.consumer';
import { createDevicesRpcHandler } from './entry/devices.rpc';
import { createSearchRpcHandler } from './entry/search.rpc';
import type { MicroBatcherOptions } from './domain/grouped-writes';
import { createIngestMetrics } from './metrics';

export interface IngestWorkerDeps {
  bus: Pick<Bus, 'consume' | 'queueDepth' | 'serve'>;
  store: Pick<
    ContentStore,
    | 'insertItems'
    | 'ensureIndexes'
    | 'search'
    | 'deviceCounters'
    | 'deviceListing'
    | 'newestItemTimes'
  >;
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
  /** Serves searches on search.rpc, then consumes content batches. */
  start(): Promise<void>;
  /**
   * Stops taking messages and searches; batches in hand are written and acked (or given back
   * when the store is down), searches in hand are answered.
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
  const consumer = createContentBatchConsumer({
    store: deps.store,
    metrics,
    logger,
    grouping: deps.grouping,
    retry: {
      delayMs: (attempt) => backoffDelay(deps.retry, attempt),
      keepTrying: () => !stopping,
      onRetry: (error, attempt) => {
        metrics.storeRetries.inc();
        logger.warn({ err: error, attempt }, 'content store unavailable; retrying');
      },
    },
    pauseBeforeRedelivery: (deliveryCount) =>
      pause(backoffDelay(deps.retry, deliveryCount + 1), stopped.signal),
  });

  return {
    async start() {
      await deps.store.ensureIndexes();
      // A consumer of its own, so a search never waits behind batches in the prefetch window
      // (and a slow search never holds a batch); first, so a started worker answers both.
      // search.rpc carries the store's reads: searches and the device counters (GET /devices),
      // told apart by the request's type; an unknown type gets the search handler's refusal.
      const search = createSearchRpcHandler({ store: deps.store, metrics, logger });
      const devices = createDevicesRpcHandler({ store: deps.store, logger });
      searching = await deps.bus.serve(
        queueNames.searchRpc,
        (request): Promise<Envelope> =>
          request.type === 'devices.request' ? devices(request) : search(request),
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
      await consumer.drain();
      await cancelled;
      await searchesAnswered;
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
