import { AppError, operatorTimings } from '@screenfleet/contracts';

/** The agent's two clocks: wall time (epoch ms) and monotonic time (performance.now). */
export interface AgentClock {
  wall: () => number;
  monotonic: () => number;
}

export const systemClock: AgentClock = { wall: Date.now, monotonic: () => performance.now() };

/**
 * The monotonic time after which a command must start nothing visible. The earlier of:
 * - receipt + budget_ms, on this agent's monotonic clock: the gateway waits expiration + budget
 *   + grace (operatorTimings), so the press ends before its answer whatever the wall clocks say;
 * - sent_at + timeout_ms - grace on this agent's wall clock: catches a command that sat in the
 *   socket buffer of a stalled agent (its receipt looks recent). With a clock behind the
 *   gateway's this bound is late, never early, and the budget still holds.
 */
export function commandDeadline(
  command: { budget_ms: number; timeout_ms: number },
  sentAt: string,
  received: { wall: number; monotonic: number },
): number {
  const sent = Date.parse(sentAt);
  if (!Number.isFinite(sent)) {
    throw new AppError('validation_failed', `the command's sent_at ${sentAt} is not a time`);
  }
  const { graceMs } = operatorTimings(command.timeout_ms);
  const wallLeft = sent + command.timeout_ms - graceMs - received.wall;
  return received.monotonic + Math.min(command.budget_ms, wallLeft);
}
