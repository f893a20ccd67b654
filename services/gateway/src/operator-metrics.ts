import { Counter, Gauge, Histogram, type Registry } from '@screenfleet/runtime';

/** Operator command metrics; labels are bounded (action, result = 'success' or an error code). */
export function createOperatorMetrics(registry: Registry) {
  const registers = [registry];
  // Read at scrape time, so an agent whose heartbeat expired is gone from the count even when
  // no request asked for the devices since.
  let connectedAgents: () => number = () => 0;
  const commands = new Counter({
    name: 'gateway_operator_commands_total',
    help: 'Operator commands by action (list, press) and result (success or error code)',
    labelNames: ['action', 'result'] as const,
    registers,
  });
  // Present from the start, so rate() and increase() see the first command of each action.
  for (const action of ['list', 'press']) commands.inc({ action, result: 'success' }, 0);
  return {
    commands,
    commandDuration: new Histogram({
      name: 'gateway_operator_command_duration_seconds',
      help: 'Operator commands from request to answer, by action (end to end through the agent)',
      labelNames: ['action'] as const,
      buckets: [0.0025, 0.005, 0.01, 0.02, 0.03, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers,
    }),
    agentsConnected: new Gauge({
      name: 'gateway_operator_agents_connected',
      help: 'Operator agents whose presence heartbeat is current, as this gateway sees them',
      registers,
      collect() {
        this.set(connectedAgents());
      },
    }),
    /** Where agentsConnected reads the count from: the gateway's presence view. */
    countAgentsWith(count: () => number): void {
      connectedAgents = count;
    },
  };
}

export type OperatorMetrics = ReturnType<typeof createOperatorMetrics>;
