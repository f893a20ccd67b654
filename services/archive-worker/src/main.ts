import { topology } from '@screenfleet/contracts';
import { connectServiceBus } from '@screenfleet/bus';
import { readinessOf, runService } from '@screenfleet/runtime';
import { createMongoArchiveStateStore, createMongoContentStore } from '@screenfleet/storage';
import { archiveConfigSpec } from './config';
import { createArchiveWorker, openArchiveStore } from './index';
import { archiveWorkerSettings } from './settings';

void runService('archive-worker', archiveConfigSpec, async (host) => {
  const { config, logger, registry, onStop } = host;
  const settings = archiveWorkerSettings(config, config.connectionName);
  const stores = { url: config.mongodbUrl, database: config.database, logger };
  const content = createMongoContentStore(stores);
  onStop('close the content store', () => content.close());
  const state = createMongoArchiveStateStore(stores);
  onStop('close the state store', () => state.close());
  const archive = openArchiveStore(config);
  onStop('close the archive store', () => archive.close());
  const bus = await connectServiceBus(host, {
    url: config.rabbitmqUrl,
    topology,
    connectionName: config.connectionName,
  });
  const worker = createArchiveWorker({
    bus,
    content,
    archive,
    state,
    logger,
    registry,
    ...settings,
  });
  await worker.start();
  onStop('stop answering and finish the chunk in hand', () => worker.stop());
  return { readiness: () => readinessOf({ broker: bus.isConnected() }) };
});
