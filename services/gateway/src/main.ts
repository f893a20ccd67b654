import { topology } from '@screenfleet/contracts';
import { createAmqpBus } from '@screenfleet/bus';
import {
  createLogger,
  createMetrics,
  loadConfig,
  onShutdown,
  runMain,
  startOpsServer,
} from '@screenfleet/runtime';
import { resolveAuth } from './auth/auth-setup';
import { gatewayConfigSpec } from './config';
import { createGateway, createGatewayMetrics } from './index';

void runMain(
  async () => {
    const config = loadConfig(gatewayConfigSpec);
    const logger = createLogger({ service: 'gateway', level: config.logLevel });
    const { auth, localToken } = resolveAuth(config);
    const registry = createMetrics();
    const bus = await createAmqpBus({
      url: config.rabbitmqUrl,
      topology,
      connectionName: 'gateway',
      logger,
      publishTimeoutMs: config.publishTimeout,
    });
    const gateway = createGateway({
      bus,
      auth,
      metrics: createGatewayMetrics(registry),
      logger,
      operator: { timeoutMs: config.operatorTimeout },
      archive: {
        timeoutMs: config.archiveTimeout,
        restoreTimeoutMs: config.archiveRestoreTimeout,
      },
    });
    const port = await gateway.listen(config.port, config.host);
    const ops = await startOpsServer({
      port: config.opsPort,
      host: config.opsHost,
      metricsToken: config.metricsToken,
      registry,
      logger,
      readiness: () => ({
        ready: bus.isConnected(),
        checks: { broker: bus.isConnected() ? 'up' : 'down' },
      }),
    });
    logger.info({ port, host: config.host, opsPort: ops.port }, 'gateway listening');
    if (localToken)
      logger.info(
        { token: localToken },
        'no GATEWAY_TOKENS: use this local token (Authorization: Bearer <token>)',
      );
    if (auth.allowUnauthenticatedLoopback)
      logger.warn('requests without a token are accepted from loopback clients');

    onShutdown(
      logger,
      [
        { name: 'stop HTTP intake and finish requests in flight', run: () => gateway.close() },
        { name: 'close the broker connection', run: () => bus.close() },
        { name: 'close the ops server', run: () => ops.close() },
      ],
      { timeoutMs: config.shutdownTimeout },
    );
  },
  { service: 'gateway' },
);
