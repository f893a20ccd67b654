import type { Config, ConfigSpec } from './config';
import { LOG_LEVELS } from './logger';

/**
 * Which of the broker's nodes a process tries first: `shuffled` spreads the processes of a
 * deployment over the nodes of a cluster without any per-process setting; `listed` keeps the
 * order given, to pin a process to the node beside it (or a test to a node).
 */
export const BROKER_NODE_ORDERS = ['shuffled', 'listed'] as const;
export type BrokerNodeOrder = (typeof BROKER_NODE_ORDERS)[number];

/**
 * The variables every service process has, so each config.ts spreads one definition instead of
 * repeating it: broker nodes, log level, the ops server's address, the graceful-stop limit.
 */
export function serviceConfigSpec(prefix: string, defaultOpsPort: number) {
  return {
    rabbitmqUrl: {
      env: 'RABBITMQ_URL',
      kind: 'urls',
      protocols: ['amqp', 'amqps'],
      secret: true,
      doc: "RabbitMQ node's URL, or the nodes of one cluster: the process connects to one and, when it loses it, to the next (docs/deploy.md)",
    },
    rabbitmqUrlOrder: {
      env: 'RABBITMQ_URL_ORDER',
      kind: 'enum',
      values: BROKER_NODE_ORDERS,
      default: 'shuffled',
      doc: 'Which node of RABBITMQ_URL comes first: shuffled (each process its own order, so processes spread over the nodes) or listed (as written: pin a process to the node beside it)',
    },
    opsPort: {
      env: `${prefix}_OPS_PORT`,
      kind: 'integer',
      min: 0,
      max: 65535,
      default: defaultOpsPort,
      doc: 'Port of /metrics, /healthz, /readyz',
    },
    opsHost: {
      env: `${prefix}_OPS_HOST`,
      kind: 'string',
      default: '127.0.0.1',
      doc: 'Address of the ops server; set METRICS_TOKEN before opening it to the network',
    },
    metricsToken: {
      env: 'METRICS_TOKEN',
      kind: 'string',
      optional: true,
      secret: true,
      doc: 'Bearer token Prometheus must send for /metrics (unset: /metrics is open on the ops address)',
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
      default: 15000,
      doc: 'Longest graceful stop',
    },
  } as const;
}

/**
 * The variables of a service's spec that name a server it connects to (the broker, the
 * MongoDB-protocol store, the name it shows them). The embedded mode replaces those servers, so
 * it reads a service's spec without them, and a service's settings function never sees them.
 */
export const SERVER_VARS = [
  'rabbitmqUrl',
  'rabbitmqUrlOrder',
  'mongodbUrl',
  'database',
  'connectionName',
] as const;
export type ServerVar = (typeof SERVER_VARS)[number];

/** The spec without its server variables (see SERVER_VARS). */
export function withoutServerVars<S extends ConfigSpec>(spec: S): Omit<S, ServerVar> {
  const rest: Record<string, unknown> = { ...spec };
  for (const key of SERVER_VARS) delete rest[key];
  return rest as Omit<S, ServerVar>;
}

/** What a service's settings function reads: its config in either mode (no server variables). */
export type SettingsConfig<S extends ConfigSpec> = Config<Omit<S, ServerVar>>;
