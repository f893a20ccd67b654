import { exchangeNames, legacyQueueNames, topology } from '@screenfleet/contracts';
import { createAmqpBus, retireQueue } from '@screenfleet/bus';
import {
  createLogger,
  createMetrics,
  loadConfig,
  onShutdown,
  runMain,
  startOpsServer,
} from '@screenfleet/runtime';
import { createMongoContentStore } from '@screenfleet/storage';
import { ingestConfigSpec } from './config';
import { createIngestWorker } from './index';

void runMain(
  async () => {
    const config = loadConfig(ingestConfigSpec);
    const logger = createLogger({ service: 'ingest-worker', level: config.logLevel });
    const registry = createMetrics();
    const store = createMongoContentStore({
      url: config.mongodbUrl,
      database: config.database,
      logger,
    });
    const bus = await createAmqpBus({
      url: config.rabbitmqUrl,
      topology,
      connectionName: config.connectionName,
      logger,
    });
    // The queue of the earlier topology (at-most-once dead-lettering) is emptied into the
    // current one; a no-op once it is gone.
    const moved = await retireQueue({
      url: config.rabbitmqUrl,
      queue: legacyQueueNames.ingestContent,
      exchange: exchangeNames.capture,
      bindingKeys: ['content.#'],
      connectionName: `${config.connectionName}-migrate`,
    });
    if (moved > 0)
      logger.info(
        { moved, queue: legacyQueueNames.ingestContent },
        'moved batches from the old queue',
      );
    const worker = createIngestWorker({
      bus,
      store,
      logger,
      registry,
      prefetch: config.prefetch,
      maxBytesInFlight: config.maxBytesInFlight,
      grouping: { maxWeight: config.groupItems, maxWaitMs: config.groupWait },
      retry: { initialMs: config.retryInitial, maxMs: config.retryMax },
      searchPrefetch: config.searchPrefetch,
      captureStallAfterMs: config.captureStallAfter,
    });
    await worker.start();
    const ops = await startOpsServer({
      port: config.opsPort,
      host: config.opsHost,
      metricsToken: config.metricsToken,
      registry,
      logger,
      readiness: () => ({
        ready: bus.isConnected(),
        checks: { broker: bus.isConnected() ? 'up' : 'down' },
      }),
    });
    onShutdown(
      logger,
      [
        {
          name: 'stop consuming and finish the messages and searches in hand',
          run: () => worker.stop(),
        },
        { name: 'close the broker connection', run: () => bus.close() },
        { name: 'close the content store', run: () => store.close() },
        { name: 'close the ops server', run: () => ops.close() },
      ],
      { timeoutMs: config.shutdownTimeout },
    );
  },
  { service: 'ingest-worker' },
);
