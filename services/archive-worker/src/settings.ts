import { hostname } from 'node:os';
import type { SettingsConfig } from '@screenfleet/runtime';
import { archiveConfigSpec, checkArchiveConfig, parseEncryptionKeys } from './config';
import { archiveKeyring } from './domain/chunk-codec';
import type { ArchiveWorkerDeps } from './archive-worker';
import { createLocalMediaFiles, createLocalMediaWriter } from './local-media-files';

/** What createArchiveWorker takes besides its stores, the bus, the logger and the registry. */
export type ArchiveWorkerSettings = Omit<
  ArchiveWorkerDeps,
  'bus' | 'content' | 'archive' | 'state' | 'audit' | 'logger' | 'registry'
>;

/**
 * The worker's settings from its config, in both modes (start.ts). A new setting is its variable
 * in config.ts and its line here. Checks the rules
 * across variables and the keys first (a ConfigError naming them). `holderName` starts the lease
 * holder id, unique per process with the host and pid.
 */
export function archiveWorkerSettings(
  config: SettingsConfig<typeof archiveConfigSpec>,
  holderName: string,
): ArchiveWorkerSettings {
  checkArchiveConfig(config);
  return {
    ...(config.mediaRoot
      ? {
          media: createLocalMediaFiles(config.mediaRoot),
          mediaWriter: createLocalMediaWriter(config.mediaRoot),
        }
      : {}),
    keyring: archiveKeyring(parseEncryptionKeys(config)),
    allowUnreadable: config.allowUnreadable,
    defaults: {
      enabled: config.enabled,
      retention_days: config.retentionDays,
      storage_limit: config.storageLimit,
    },
    chunkSize: config.chunkSize,
    auditRetentionDays: config.auditRetentionDays,
    intervalMs: config.interval,
    leaseTtlMs: config.leaseTtl,
    retry: { initialMs: config.retryInitial, maxMs: config.retryMax },
    holderId: `${holderName}@${hostname()}:${process.pid}`,
  };
}
