import { agentTopology } from '@screenfleet/contracts';
import { connectServiceBus } from '@screenfleet/bus';
import { readinessOf, runService } from '@screenfleet/runtime';
import { agentConfigSpec } from './config';
import { createOperatorAgent } from './index';
import { openDesktop } from './open-desktop';
import { operatorAgentSettings } from './settings';

void runService('operator-agent', agentConfigSpec, async (host) => {
  const { config, logger, registry, onStop } = host;
  const settings = operatorAgentSettings(config);
  const { desktop, problem } = await openDesktop(config, logger);
  onStop('close the desktop', () => desktop.close());
  const bus = await connectServiceBus(host, {
    url: config.rabbitmqUrl,
    topology: agentTopology,
    connectionName: `operator-agent ${config.deviceName}`,
  });
  const agent = createOperatorAgent({ bus, desktop, logger, registry, ...settings });
  await agent.start();
  onStop('say goodbye, finish the command in hand', () => agent.stop());
  return {
    readiness: () => readinessOf({ broker: bus.isConnected(), desktop: problem ?? true }),
    announce: (ops) =>
      logger.info({ device: config.deviceName, opsPort: ops.port }, 'operator agent started'),
  };
});
