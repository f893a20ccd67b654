import type { Logger } from '@screenfleet/runtime';
import { loadOrCreateLocalToken, localTokenBanner, type LocalToken } from './local-token';
import { isLoopback } from './loopback';
import { createTokenRegistry, parseTokens, type TokenEntry } from './tokens';
import type { AuthOptions } from '../entry/authenticate';

export interface AuthSetup {
  /** With the configured tokens only; start.ts puts the token cache in their place. */
  auth: AuthOptions;
  /** GATEWAY_TOKENS, or the local token: accepted whether or not the stored tokens are loaded. */
  staticTokens: TokenEntry[];
  /** Set when no tokens were configured: the local token, its file, whether it is new. */
  localToken?: LocalToken;
}

/**
 * Never open to the network without auth: the unauthenticated compatibility switch needs the
 * gateway bound to loopback. The tokens accepted besides the stored ones: GATEWAY_TOKENS; else
 * on loopback the local token (made once, kept in the data directory); else none.
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
    const staticTokens = parseTokens(config.tokens);
    return {
      auth: { tokens: createTokenRegistry(staticTokens), allowUnauthenticatedLoopback: allow },
      staticTokens,
    };
  }
  // On the network with no configured token: only stored tokens (ADR 0019), no local token (a
  // secret in a file on a server is what GATEWAY_TOKENS' removal was for). Nobody gets in
  // without a token someone made with `npm run tokens` or POST /tokens.
  if (!loopback) {
    return {
      auth: { tokens: createTokenRegistry([]), allowUnauthenticatedLoopback: allow },
      staticTokens: [],
    };
  }
  const local = loadOrCreateLocalToken(config.dataDir);
  return {
    auth: { tokens: createTokenRegistry([local.entry]), allowUnauthenticatedLoopback: allow },
    staticTokens: [local.entry],
    localToken: local,
  };
}

/**
 * Says how clients get in, once the API listens: a new local token goes to the terminal once,
 * never into the logs; the file that keeps it and an open loopback are logged.
 */
export function announceAuth({ auth, localToken, staticTokens }: AuthSetup, logger: Logger): void {
  if (staticTokens.length === 0)
    logger.info(
      'no GATEWAY_TOKENS: only stored tokens are accepted (npm run tokens, docs/tokens.md)',
    );
  if (localToken) {
    if (localToken.created) process.stderr.write(localTokenBanner(localToken));
    logger.info(
      { file: localToken.file },
      'no GATEWAY_TOKENS: clients use the local token kept in this file (Authorization: Bearer <token>)',
    );
  }
  if (auth.allowUnauthenticatedLoopback)
    logger.warn('requests without a token are accepted from loopback clients');
}
