import { archiveConfigSpec } from '@screenfleet/archive-worker';
import { gatewayConfigSpec } from '@screenfleet/gateway';
import { ingestConfigSpec } from '@screenfleet/ingest-worker';
import { agentConfigSpec } from '@screenfleet/operator-agent';
import { defineConfig, withoutDefault, type Config } from '@screenfleet/runtime';

/**
 * What `npm start` itself reads, each variable as the service that owns it defines it (name,
 * rule, doc): which mode to run, where the data and the API are, and the variables it fills in
 * when unset (launch-defaults.ts), which therefore have no default here. The services read the
 * rest of the environment themselves.
 */
export const launcherConfigSpec = defineConfig({
  rabbitmqUrl: { ...ingestConfigSpec.rabbitmqUrl, optional: true },
  mongodbUrl: { ...ingestConfigSpec.mongodbUrl, optional: true },
  dataDir: gatewayConfigSpec.dataDir,
  apiHost: gatewayConfigSpec.host,
  apiPort: gatewayConfigSpec.port,
  deviceName: { ...agentConfigSpec.deviceName, optional: true },
  archiveDir: withoutDefault(archiveConfigSpec.dir),
  operatorSigningKey: gatewayConfigSpec.operatorSigningKey,
  commandPublicKey: { ...agentConfigSpec.commandPublicKey, optional: true },
});

export type LauncherConfig = Config<typeof launcherConfigSpec>;
