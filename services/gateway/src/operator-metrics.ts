import { Counter, Histogram, type Registry } from '@screenfleet/runtime';

/** Operator command metrics; labels are bounded (action, result = 'success' or an error code). */
export function createOperatorMetrics(registry: Registry) {
  const registers = [registry];
  return {
    commands: new Counter({
      name: 'gateway_operator_commands_total',
      help: 'Operator commands by action (list, press) and result (success or error code)',
      labelNames: ['action', 'result'] as const,
      registers,
    }),
    commandDuration: new Histogram({
      name: 'gateway_operator_command_duration_seconds',
      help: 'Operator commands from request to answer, by action (end to end through the agent)',
      labelNames: ['action'] as const,
      buckets: [0.0025, 0.005, 0.01, 0.02, 0.03, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers,
    }),
  };
}

export type OperatorMetrics = ReturnType<typeof createOperatorMetrics>;
