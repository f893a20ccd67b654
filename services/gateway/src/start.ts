import { topology } from '@screenfleet/contracts';
import type { Service, ServiceRunning } from '@screenfleet/modes';
import { announceAuth, resolveAuth } from './auth/auth-setup';
import { createRateLimits, parseRateLimits } from './auth/rate-limits';
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
    const auth = { ...authSetup.auth, rateLimits };
    const gateway = createGateway({ bus, auth, metrics, logger, ...settings });
    const port = await gateway.listen(config.port, config.host);
    onStop('stop HTTP intake and finish requests in flight', () => gateway.close());
    return {
      port,
      tokenFile: authSetup.localToken?.file,
      announce: (ops) => {
        logger.info({ port, host: config.host, opsPort: ops.port }, 'gateway listening');
        announceAuth(authSetup, logger);
      },
    };
  },
};
