import { defineConfig, LOG_LEVELS } from '@screenfleet/runtime';

export const agentConfigSpec = defineConfig({
  deviceName: {
    env: 'DEVICE_NAME',
    kind: 'string',
    doc: 'The name gateways address this desktop by (device_name in requests); one agent per name',
  },
  rabbitmqUrl: {
    env: 'RABBITMQ_URL',
    kind: 'url',
    protocols: ['amqp', 'amqps'],
    secret: true,
    doc: 'RabbitMQ URL',
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
  opsPort: {
    env: 'OPERATOR_OPS_PORT',
    kind: 'integer',
    min: 0,
    max: 65535,
    default: 9467,
    doc: 'Port of /metrics, /healthz, /readyz (0 = any free port)',
  },
  opsHost: {
    env: 'OPERATOR_OPS_HOST',
    kind: 'string',
    default: '127.0.0.1',
    doc: 'Address of the ops server',
  },
  logLevel: {
    env: 'LOG_LEVEL',
    kind: 'enum',
    values: LOG_LEVELS,
    default: 'info',
    doc: 'Log level',
  },
  shutdownTimeout: {
    env: 'SHUTDOWN_TIMEOUT',
    kind: 'duration',
    default: 10_000,
    doc: 'Longest graceful stop',
  },
});
