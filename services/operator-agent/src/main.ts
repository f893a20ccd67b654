import { agentTopology, loadVerifyKey } from '@screenfleet/contracts';
import { createAmqpBus } from '@screenfleet/bus';
import {
  createLogger,
  createMetrics,
  loadConfig,
  onShutdown,
  runMain,
  startOpsServer,
} from '@screenfleet/runtime';
import { agentConfigSpec } from './config';
import { createLinuxDesktop, DesktopUnavailableError, type Desktop } from './desktop';
import { createOperatorAgent, unavailableDesktop } from './index';

void runMain(
  async () => {
    const config = loadConfig(agentConfigSpec);
    const logger = createLogger({ service: 'operator-agent', level: config.logLevel });
    const registry = createMetrics();
    const commandKey = loadVerifyKey(config.commandPublicKey);
    const env = {
      DISPLAY: config.display,
      DBUS_SESSION_BUS_ADDRESS: config.dbusSessionBusAddress,
      XAUTHORITY: config.xauthority,
    };
    // An unusable desktop is not a start failure: the agent still answers, with 503 and why.
    let desktop: Desktop;
    let desktopProblem: string | undefined;
    try {
      desktop = await createLinuxDesktop({ env });
    } catch (err) {
      if (!(err instanceof DesktopUnavailableError)) throw err;
      desktopProblem = err.message;
      desktop = unavailableDesktop(err.message);
      logger.error({ reason: err.message }, 'desktop unavailable: every command will get 503');
    }
    const bus = await createAmqpBus({
      url: config.rabbitmqUrl,
      topology: agentTopology,
      connectionName: `operator-agent ${config.deviceName}`,
      logger,
    });
    const agent = createOperatorAgent({
      bus,
      desktop,
      deviceName: config.deviceName,
      commandKey,
      snapshotTtlMs: config.snapshotTtl,
      heartbeatMs: config.heartbeat,
      logger,
      registry,
    });
    await agent.start();
    const ops = await startOpsServer({
      port: config.opsPort,
      host: config.opsHost,
      metricsToken: config.metricsToken,
      registry,
      logger,
      readiness: () => ({
        ready: bus.isConnected() && desktopProblem === undefined,
        checks: {
          broker: bus.isConnected() ? 'up' : 'down',
          desktop: desktopProblem === undefined ? 'up' : `down: ${desktopProblem}`,
        },
      }),
    });
    logger.info({ device: config.deviceName, opsPort: ops.port }, 'operator agent started');
    onShutdown(
      logger,
      [
        { name: 'say goodbye, finish the command in hand', run: () => agent.stop() },
        { name: 'close the broker connection', run: () => bus.close() },
        { name: 'close the desktop', run: () => desktop.close() },
        { name: 'close the ops server', run: () => ops.close() },
      ],
      { timeoutMs: config.shutdownTimeout },
    );
  },
  { service: 'operator-agent' },
);
