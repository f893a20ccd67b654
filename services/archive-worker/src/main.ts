import { hostname } from 'node:os';
import { topology } from '@screenfleet/contracts';
import { createAmqpBus } from '@screenfleet/bus';
import {
  createLogger,
  createMetrics,
  loadConfig,
  onShutdown,
  runMain,
  startOpsServer,
} from '@screenfleet/runtime';
import { createMongoArchiveStateStore, createMongoContentStore } from '@screenfleet/storage';
import { archiveConfigSpec, checkArchiveConfig, parseEncryptionKeys } from './config';
import {
  archiveKeyring,
  createArchiveWorker,
  createLocalMediaFiles,
  createLocalMediaWriter,
  openArchiveStore,
} from './index';

void runMain(
  async () => {
    const config = loadConfig(archiveConfigSpec);
    checkArchiveConfig(config);
    const keys = parseEncryptionKeys(config);
    const logger = createLogger({ service: 'archive-worker', level: config.logLevel });
    const registry = createMetrics();
    const content = createMongoContentStore({
      url: config.mongodbUrl,
      database: config.database,
      logger,
    });
    const state = createMongoArchiveStateStore({
      url: config.mongodbUrl,
      database: config.database,
      logger,
    });
    const archive = openArchiveStore(config);
    const bus = await createAmqpBus({
      url: config.rabbitmqUrl,
      topology,
      connectionName: config.connectionName,
      logger,
    });
    const worker = createArchiveWorker({
      bus,
      content,
      archive,
      state,
      ...(config.mediaRoot
        ? {
            media: createLocalMediaFiles(config.mediaRoot),
            mediaWriter: createLocalMediaWriter(config.mediaRoot),
          }
        : {}),
      keyring: archiveKeyring(keys),
      allowUnreadable: config.allowUnreadable,
      defaults: {
        enabled: config.enabled,
        retention_days: config.retentionDays,
        storage_limit: config.storageLimit,
      },
      chunkSize: config.chunkSize,
      intervalMs: config.interval,
      leaseTtlMs: config.leaseTtl,
      retry: { initialMs: config.retryInitial, maxMs: config.retryMax },
      holderId: `${config.connectionName}@${hostname()}:${process.pid}`,
      logger,
      registry,
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
        { name: 'stop answering and finish the chunk in hand', run: () => worker.stop() },
        { name: 'close the broker connection', run: () => bus.close() },
        { name: 'close the archive store', run: () => archive.close() },
        { name: 'close the state store', run: () => state.close() },
        { name: 'close the content store', run: () => content.close() },
        { name: 'close the ops server', run: () => ops.close() },
      ],
      { timeoutMs: config.shutdownTimeout },
    );
  },
  { service: 'archive-worker' },
);
