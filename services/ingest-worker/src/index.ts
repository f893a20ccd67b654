import { queueNames } from '@screenfleet/contracts';
import type { Bus, Subscription } from '@screenfleet/bus';
import {
  backoffDelay,
  type BackoffOptions,
  type Logger,
  type Registry,
} from '@screenfleet/runtime';
import type { ContentStore } from '@screenfleet/storage';
import { createContentBatchConsumer } from './entry/content-batch.consumer';
import type { MicroBatcherOptions } from './domain/micro-batcher';
import { createIngestMetrics } from './metrics';

export { ingestConfigSpec } from './config';
export { toDocuments } from './domain/to-documents';

export interface IngestWorkerDeps {
  bus: Pick<Bus, 'consume' | 'queueDepth'>;
  store: Pick<ContentStore, 'insertItems' | 'ensureIndexes'>;
  logger: Logger;
  registry: Registry;
  prefetch: number;
  grouping: MicroBatcherOptions;
  retry: BackoffOptions;
}

export interface IngestWorker {
  start(): Promise<void>;
  /** Stops taking messages; those in hand are written and acked, or given back when the store is down. */
  stop(): Promise<void>;
}

export function createIngestWorker(deps: IngestWorkerDeps): IngestWorker {
  const logger = deps.logger.child({ component: 'ingest' });
  const metrics = createIngestMetrics(deps.registry, (queue) => deps.bus.queueDepth(queue));
  let stopping = false;
  const stopped = new AbortController();
  let subscription: Subscription | undefined;
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
      subscription = await deps.bus.consume(queueNames.ingestContent, consumer.handle, {
        prefetch: deps.prefetch,
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
      await consumer.drain();
      await cancelled;
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
