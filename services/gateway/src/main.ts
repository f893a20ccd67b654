import { loadSigningKey, topology } from '@screenfleet/contracts';
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
import { localTokenBanner } from './auth/local-token';
import { gatewayConfigSpec } from './config';
import { createGateway, createGatewayMetrics } from './index';

void runMain(
  async () => {
    const config = loadConfig(gatewayConfigSpec);
    const logger = createLogger({ service: 'gateway', level: config.logLevel });
    const { auth, localToken } = resolveAuth(config);
    const registry = createMetrics();
    const signingKey = config.operatorSigningKey
      ? loadSigningKey(config.operatorSigningKey)
      : undefined;
    if (!signingKey) {
      logger.warn(
        {},
        'GATEWAY_OPERATOR_SIGNING_KEY is not set: operator commands go unsigned and agents refuse them',
      );
    }
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
      operator: {
        timeoutMs: config.operatorTimeout,
        ...(signingKey ? { signingKey } : {}),
      },
      search: { timeoutMs: config.searchTimeout },
      devices: { stallAfterMs: config.captureStallAfter },
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
    if (localToken) {
      // The secret goes to the terminal once, when it is made, never into the logs.
      if (localToken.created) process.stderr.write(localTokenBanner(localToken));
      logger.info(
        { file: localToken.file },
        'no GATEWAY_TOKENS: clients use the local token kept in this file (Authorization: Bearer <token>)',
      );
    }
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
