import { loadVerifyKey } from '@screenfleet/contracts';
import type { SettingsConfig } from '@screenfleet/runtime';
import type { agentConfigSpec } from './config';
import type { OperatorAgentDeps } from './operator-agent';

/** What createOperatorAgent takes besides the bus, the desktop (openDesktop), logger, registry. */
export type OperatorAgentSettings = Omit<
  OperatorAgentDeps,
  'bus' | 'desktop' | 'logger' | 'registry'
>;

/**
 * The agent's settings from its config, in both modes (start.ts). A new setting is its variable
 * in config.ts and its line here.
 */
export function operatorAgentSettings(
  config: SettingsConfig<typeof agentConfigSpec>,
): OperatorAgentSettings {
  return {
    deviceName: config.deviceName,
    commandKey: loadVerifyKey(config.commandPublicKey),
    snapshotTtlMs: config.snapshotTtl,
    heartbeatMs: config.heartbeat,
  };
}
