import { defineConfig, serviceConfigSpec } from '@screenfleet/runtime';

export const agentConfigSpec = defineConfig({
  ...serviceConfigSpec('OPERATOR', 9467),
  deviceName: {
    env: 'DEVICE_NAME',
    kind: 'string',
    doc: 'The name gateways address this desktop by (device_name in requests); one agent per name',
  },
  commandPublicKey: {
    env: 'OPERATOR_COMMAND_PUBLIC_KEY',
    kind: 'string',
    doc: "The gateway's Ed25519 public key (PEM, or the path of a PEM file): only commands it signed are run",
  },
  display: {
    env: 'DISPLAY',
    kind: 'string',
    optional: true,
    doc: 'The X display to drive (":0"); unset = the agent answers every command with 503',
  },
  dbusSessionBusAddress: {
    env: 'DBUS_SESSION_BUS_ADDRESS',
    kind: 'string',
    optional: true,
    doc: 'The desktop session bus, where the AT-SPI accessibility bus is found',
  },
  xauthority: {
    env: 'XAUTHORITY',
    kind: 'string',
    optional: true,
    doc: 'X authority file, when the display needs one',
  },
  snapshotTtl: {
    env: 'OPERATOR_SNAPSHOT_TTL',
    kind: 'duration',
    default: 30_000,
    doc: 'How long an element listing stays usable for press-key-by-index',
  },
  heartbeat: {
    env: 'OPERATOR_HEARTBEAT_INTERVAL',
    kind: 'duration',
    default: 2000,
    doc: 'Presence heartbeat interval (gateways forget the agent after 3 missed ones)',
  },
});
