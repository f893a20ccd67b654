import { topology } from '@screenfleet/contracts';
import type { Service, ServiceRunning } from '@screenfleet/modes';
import { announceAuth, resolveAuth } from './auth/auth-setup';
import { createRateLimits, parseRateLimits } from './auth/rate-limits';
import { createTokenCache } from './auth/token-cache';
import { followTokenChanges } from './auth/token-events.consumer';
import { createTokensRpcClient } from './auth/tokens-rpc.client';
import { gatewayConfigSpec } from './config';
import { createGateway } from './gateway';
import { createGatewayMetrics } from './metrics';
import { gatewaySettings } from './settings';

/**
 * The gateway on its mode's ports: its main.ts, or the embedded process's API. It returns the
 * port it listens on and the local token's file (none with GATEWAY_TOKENS), for the launcher.
 */
export const gatewayService: Service<
  typeof gatewayConfigSpec,
  ServiceRunning & { port: number; tokenFile: string | undefined }
> = {
  name: 'gateway',
  spec: gatewayConfigSpec,
  async start({ config, logger, registry, onStop }, ports) {
    const authSetup = resolveAuth(config);
    const rateLimits = createRateLimits(
      parseRateLimits({
        ingest: config.rateLimitIngest,
        search: config.rateLimitSearch,
        operator: config.rateLimitOperator,
        archive: config.rateLimitArchive,
        admin: config.rateLimitAdmin,
        unauthenticated: config.rateLimitUnauthenticated,
      }),
    );
    const settings = gatewaySettings(config, logger);
    const bus = await ports.bus({ topology, publishTimeoutMs: config.publishTimeout });
    const metrics = createGatewayMetrics(registry);
    // The stored tokens (ADR 0019): the listener does not wait for them (no ingest worker may
    // run yet); until the first snapshot only the configured tokens get in, others get 503.
    const tokens = createTokenCache({
      staticTokens: authSetup.staticTokens,
      store: createTokensRpcClient(bus, { timeoutMs: config.tokensTimeout }),
      logger,
      observer: metrics.tokens,
    });
    metrics.tokens.readFrom(tokens);
    const changes = await followTokenChanges({ bus, refresh: tokens.refresh, logger });
    tokens.start();
    onStop('stop loading the stored tokens and report their last uses', async () => {
      await changes.stop();
      await tokens.stop();
    });
    const auth = { ...authSetup.auth, tokens, rateLimits };
    const gateway = createGateway({ bus, auth, metrics, logger, ...settings });
    const port = await gateway.listen(config.port, config.host);
    onStop('stop HTTP intake and finish requests in flight', () => gateway.close());
    return {
      port,
      tokenFile: authSetup.localToken?.file,
      // Not ready before the first snapshot: a balancer sends stored tokens elsewhere meanwhile.
      checks: () => ({ tokens: tokens.isComplete() }),
      announce: (ops) => {
        logger.info({ port, host: config.host, opsPort: ops.port }, 'gateway listening');
        announceAuth(authSetup, logger);
      },
    };
  },
};
