import type { SettingsConfig } from '@screenfleet/runtime';
import type { ingestConfigSpec } from './config';
import type { IngestWorkerDeps } from './ingest-worker';

/** What createIngestWorker takes besides its ports, the logger and the registry. */
export type IngestWorkerSettings = Omit<
  IngestWorkerDeps,
  'bus' | 'store' | 'tokenStore' | 'auditStore' | 'logger' | 'registry'
>;

/**
 * The worker's settings from its config, in both modes (start.ts). A new setting is its variable
 * in config.ts and its line here.
 */
export function ingestWorkerSettings(
  config: SettingsConfig<typeof ingestConfigSpec>,
): IngestWorkerSettings {
  return {
    prefetch: config.prefetch,
    maxBytesInFlight: config.maxBytesInFlight,
    grouping: { maxWeight: config.groupItems, maxWaitMs: config.groupWait },
    retry: { initialMs: config.retryInitial, maxMs: config.retryMax },
    searchPrefetch: config.searchPrefetch,
    captureStallAfterMs: config.captureStallAfter,
  };
}
