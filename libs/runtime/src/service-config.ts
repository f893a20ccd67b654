import { LOG_LEVELS } from './logger';

/**
 * The variables every service process has, so each config.ts spreads one definition instead of
 * repeating it: broker URL, log level, the ops server's address, the graceful-stop limit.
 */
export function serviceConfigSpec(prefix: string, defaultOpsPort: number) {
  return {
    rabbitmqUrl: {
      env: 'RABBITMQ_URL',
      kind: 'url',
      protocols: ['amqp', 'amqps'],
      secret: true,
      doc: 'RabbitMQ URL',
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
