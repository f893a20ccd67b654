/**
 * What `npm start` decides that a service's own config leaves to its deployment: the values it
 * fills in for unset variables, in both modes. A service's settings stay in its settings.ts, what
 * the embedded mode does differently in libs/modes.
 */
import { defaultArchiveDir } from '@screenfleet/archive-worker';
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
