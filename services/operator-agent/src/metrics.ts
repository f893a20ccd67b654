import { Counter, Histogram, type Registry } from '@screenfleet/runtime';

export function createAgentMetrics(registry: Registry) {
  const registers = [registry];
  return {
    commands: new Counter({
      name: 'operator_agent_commands_total',
      help: 'Commands handled, by action (list, press, click, type) and result (success or error code)',
      labelNames: ['action', 'result'] as const,
      registers,
    }),
    commandDuration: new Histogram({
      name: 'operator_agent_command_duration_seconds',
      help: 'Time from receiving a command to its answer, by action',
      labelNames: ['action'] as const,
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.02, 0.03, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
      registers,
    }),
    refused: new Counter({
      name: 'operator_agent_commands_refused_total',
      help: 'Commands refused before running: unsigned, bad_signature (not from the gateway), replayed, expired',
      labelNames: ['reason'] as const,
      registers,
    }),
    listingDuration: new Histogram({
      name: 'operator_agent_listing_duration_seconds',
      help: 'Time to read the element list from the desktop',
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
      registers,
    }),
  };
}

export type AgentMetrics = ReturnType<typeof createAgentMetrics>;
