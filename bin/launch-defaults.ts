/**
 * What `npm start` decides that a service's own config leaves to its deployment, in one place:
 * the values it fills in for unset variables (both modes), and how the embedded mode runs the
 * services differently in one process. A service's settings stay in its settings.ts.
 */
import { defaultArchiveDir, EMBEDDED_DATABASE_FILE } from '@screenfleet/archive-worker';
import type { IngestWorkerSettings } from '@screenfleet/ingest-worker';
import type { LauncherConfig } from './launcher-config';
import { ensureOperatorKeys } from './operator-keys';

/**
 * Variables for the services, in both modes, where the environment leaves them unset: the data
 * directory resolved, a filesystem archive under it, and the key pair operator commands are
 * signed with (the gateway) and checked with (the agent), made once in it (issue 19, item 6).
 * Commands are signed even in one process: the agent's code path is the same everywhere.
 */
export function launchDefaults(config: LauncherConfig, dataDir: string): Record<string, string> {
  const keys = ensureOperatorKeys(dataDir);
  return {
    DATA_DIR: dataDir,
    ARCHIVE_DIR: config.archiveDir ?? defaultArchiveDir(dataDir),
    GATEWAY_OPERATOR_SIGNING_KEY: config.operatorSigningKey ?? keys.privateKey,
    OPERATOR_COMMAND_PUBLIC_KEY: config.commandPublicKey ?? keys.publicKey,
  };
}

/** The embedded mode's own choices (bin/embedded.ts). */
export const embeddedDefaults = {
  /** The SQLite file in the data directory (the archive commands and the replay CLI find it). */
  databaseFile: EMBEDDED_DATABASE_FILE,
  /**
   * Writes go to the database's writer thread and reads to its reader connections, so a lock
   * held by another process (a second start on this data directory, a sqlite3 shell) holds the
   * writes waiting for it, not the event loop. A short wait still: the ingest worker retries a
   * busy store with backoff, well within the publish timeout.
   */
  sqliteBusyTimeoutMs: 1000,
  /**
   * No micro-batching: the writer thread's group commit already puts whatever is queued into
   * one transaction, with no wait; INGEST_GROUP_* would only add latency.
   */
  ingestGrouping: { maxWeight: 1, maxWaitMs: 0 } satisfies IngestWorkerSettings['grouping'],
  /** Starts the archive lease holder id (distributed: ARCHIVE_CONNECTION_NAME). */
  archiveHolderName: 'embedded',
} as const;
