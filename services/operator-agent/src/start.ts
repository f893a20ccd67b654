import { agentTopology } from '@screenfleet/contracts';
import type { Service } from '@screenfleet/modes';
import { agentConfigSpec } from './config';
import { openDesktop } from './open-desktop';
import { createOperatorAgent } from './operator-agent';
import { operatorAgentSettings } from './settings';

/** The operator agent on its mode's ports and this desktop: its main.ts, or the embedded one's. */
export const operatorAgentService: Service<typeof agentConfigSpec> = {
  name: 'operator-agent',
  spec: agentConfigSpec,
  async start({ config, logger, registry, onStop }, ports) {
    const settings = operatorAgentSettings(config);
    const { desktop, problem } = await openDesktop(config, logger);
    onStop('close the desktop', () => desktop.close());
    const bus = await ports.bus({
      topology: agentTopology,
      connectionName: `operator-agent ${config.deviceName}`,
    });
    const agent = createOperatorAgent({ bus, desktop, logger, registry, ...settings });
    await agent.start();
    onStop('say goodbye, finish the command in hand', () => agent.stop());
    return {
      checks: () => ({ desktop: problem ?? true }),
      announce: (ops) =>
        logger.info({ device: config.deviceName, opsPort: ops.port }, 'operator agent started'),
    };
  },
};
