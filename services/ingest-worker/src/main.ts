import { exchangeNames, legacyQueueNames, topology } from '@screenfleet/contracts';
import { connectServiceBus, retireQueue } from '@screenfleet/bus';
import { readinessOf, runService } from '@screenfleet/runtime';
import { createMongoContentStore } from '@screenfleet/storage';
import { ingestConfigSpec } from './config';
import { createIngestWorker } from './index';
import { ingestWorkerSettings } from './settings';

void runService('ingest-worker', ingestConfigSpec, async (host) => {
  const { config, logger, registry, onStop } = host;
  const store = createMongoContentStore({
    url: config.mongodbUrl,
    database: config.database,
    logger,
  });
  onStop('close the content store', () => store.close());
  const bus = await connectServiceBus(host, {
    url: config.rabbitmqUrl,
    topology,
    connectionName: config.connectionName,
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
    ...ingestWorkerSettings(config),
  });
  await worker.start();
  onStop('stop consuming and finish the messages and searches in hand', () => worker.stop());
  return { readiness: () => readinessOf({ broker: bus.isConnected() }) };
});
