import { loadOrCreateLocalToken, type LocalToken } from './local-token';
import { isLoopback } from './loopback';
import { createTokenRegistry, parseTokens } from './tokens';
import type { AuthOptions } from '../entry/authenticate';

export interface AuthSetup {
  auth: AuthOptions;
  /** Set when no tokens were configured: the local token, its file, whether it is new. */
  localToken?: LocalToken;
}

/**
 * Never open to the network without auth: without configured tokens, and with the
 * unauthenticated compatibility switch, the gateway must be bound to loopback.
 */
export function resolveAuth(config: {
  host: string;
  tokens: string | undefined;
  allowUnauthenticatedLoopback: boolean;
  dataDir: string;
}): AuthSetup {
  const loopback = isLoopback(config.host);
  if (config.allowUnauthenticatedLoopback && !loopback) {
    throw new Error(
      `GATEWAY_ALLOW_UNAUTHENTICATED_LOOPBACK needs GATEWAY_HOST on loopback (127.0.0.1 or ::1), not ${config.host}`,
    );
  }
  const allow = config.allowUnauthenticatedLoopback;
  if (config.tokens) {
    return {
      auth: {
        tokens: createTokenRegistry(parseTokens(config.tokens)),
        allowUnauthenticatedLoopback: allow,
      },
    };
  }
  if (!loopback) {
    throw new Error(
      `GATEWAY_HOST=${config.host} is not loopback: set GATEWAY_TOKENS before opening the API to the network`,
    );
  }
  const local = loadOrCreateLocalToken(config.dataDir);
  return {
    auth: { tokens: createTokenRegistry([local.entry]), allowUnauthenticatedLoopback: allow },
    localToken: local,
  };
}
