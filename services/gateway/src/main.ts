import { topology } from '@screenfleet/contracts';
import { connectServiceBus } from '@screenfleet/bus';
import { readinessOf, runService } from '@screenfleet/runtime';
import { announceAuth, resolveAuth } from './auth/auth-setup';
import { gatewayConfigSpec } from './config';
import { createGateway, createGatewayMetrics } from './index';
import { gatewaySettings } from './settings';

void runService('gateway', gatewayConfigSpec, async (host) => {
  const { config, logger, registry, onStop } = host;
  const authSetup = resolveAuth(config);
  const settings = gatewaySettings(config, logger);
  const bus = await connectServiceBus(host, {
    url: config.rabbitmqUrl,
    topology,
    connectionName: config.connectionName,
    publishTimeoutMs: config.publishTimeout,
  });
  const gateway = createGateway({
    bus,
    auth: authSetup.auth,
    metrics: createGatewayMetrics(registry),
    logger,
    ...settings,
  });
  const port = await gateway.listen(config.port, config.host);
  onStop('stop HTTP intake and finish requests in flight', () => gateway.close());
  return {
    readiness: () => readinessOf({ broker: bus.isConnected() }),
    announce: (ops) => {
      logger.info({ port, host: config.host, opsPort: ops.port }, 'gateway listening');
      announceAuth(authSetup, logger);
    },
  };
});
