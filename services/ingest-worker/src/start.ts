import { exchangeNames, legacyQueueNames, topology } from '@screenfleet/contracts';
import type { Service } from '@screenfleet/modes';
import { ingestConfigSpec } from './config';
import type { MicroBatcherOptions } from './domain/grouped-writes';
import { createIngestWorker } from './ingest-worker';
import { ingestWorkerSettings } from './settings';

/**
 * A store that commits whatever is queued in one transaction itself (the embedded mode's SQLite
 * writer thread) needs no micro-batching: INGEST_GROUP_* would only add latency.
 */
const NO_GROUPING: MicroBatcherOptions = { maxWeight: 1, maxWaitMs: 0 };

/** The ingest worker on its mode's ports: its main.ts, or one of the embedded process's services. */
export const ingestWorkerService: Service<typeof ingestConfigSpec> = {
  name: 'ingest-worker',
  spec: ingestConfigSpec,
  async start({ config, logger, registry, onStop }, ports) {
    const store = await ports.contentStore();
    const tokenStore = await ports.tokenStore();
    const auditStore = await ports.auditStore();
    const bus = await ports.bus({
      topology,
      // The queue of the earlier topology (at-most-once dead-lettering) is emptied into the
      // current one; a no-op once it is gone.
      retire: [
        {
          queue: legacyQueueNames.ingestContent,
          exchange: exchangeNames.capture,
          bindingKeys: ['content.#'],
        },
      ],
    });
    const settings = ingestWorkerSettings(config);
    const grouping = ports.storeGroupsWrites ? NO_GROUPING : settings.grouping;
    const worker = createIngestWorker({
      bus,
      store,
      tokenStore,
      auditStore,
      logger,
      registry,
      ...settings,
      grouping,
    });
    await worker.start();
    onStop('stop consuming and finish the messages and requests in hand', () => worker.stop());
    return {};
  },
};
