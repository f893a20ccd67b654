import { loadSigningKey } from '@screenfleet/contracts';
import type { Logger, SettingsConfig } from '@screenfleet/runtime';
import type { GatewayDeps } from './app';
import { parseAllowedHosts } from './auth/loopback';
import type { gatewayConfigSpec } from './config';

/** What createGateway takes besides the bus, the auth (resolveAuth), metrics and the logger. */
export type GatewaySettings = Omit<GatewayDeps, 'bus' | 'auth' | 'metrics' | 'logger'>;

/**
 * The gateway's settings from its config, in both modes (start.ts). A new setting is its variable
 * in config.ts and its line here. Without a signing key
 * the gateway still starts (agents refuse what it sends), and says so.
 */
export function gatewaySettings(
  config: SettingsConfig<typeof gatewayConfigSpec>,
  logger: Logger,
): GatewaySettings {
  const signingKey = config.operatorSigningKey
    ? loadSigningKey(config.operatorSigningKey)
    : undefined;
  if (!signingKey) {
    logger.warn(
      {},
      'GATEWAY_OPERATOR_SIGNING_KEY is not set: operator commands go unsigned and agents refuse them',
    );
  }
  return {
    operator: {
      timeoutMs: config.operatorTimeout,
      ...(signingKey ? { signingKey } : {}),
    },
    search: { timeoutMs: config.searchTimeout },
    devices: {
      stallAfterMs: config.captureStallAfter,
      healthAllowedHosts: parseAllowedHosts(config.healthAllowedHosts),
    },
    archive: {
      timeoutMs: config.archiveTimeout,
      restoreTimeoutMs: config.archiveRestoreTimeout,
    },
  };
}
