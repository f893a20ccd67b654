/**
 * How the gateway's wait for an operator command is split, so that no key press can land after
 * the gateway answered, whatever the two machines' wall clocks say:
 *
 *     timeoutMs (the gateway's whole wait) = expirationMs + budgetMs + graceMs
 *
 * - expirationMs: the AMQP message expiration; the broker drops a command not delivered by then.
 * - budgetMs: carried in the command (budget_ms). The agent turns it into a deadline on its own
 *   monotonic clock when it receives the command, and starts no press or click after it.
 * - graceMs: what may still happen after the deadline: one key toggle already under way (the
 *   releases) and the reply's trip back.
 *
 * A press therefore starts at most expirationMs + budgetMs after the send and ends within
 * graceMs, before the gateway gives up. Only the agent's own clock measures the budget: a skewed
 * clock changes nothing.
 */
export interface OperatorTimings {
  expirationMs: number;
  budgetMs: number;
  graceMs: number;
}

/** Below this the split leaves no useful budget; the gateway's config (GATEWAY_OPERATOR_TIMEOUT) refuses less. */
export const MIN_OPERATOR_TIMEOUT_MS = 500;

export function operatorTimings(timeoutMs: number): OperatorTimings {
  const total = Math.max(MIN_OPERATOR_TIMEOUT_MS, Math.floor(timeoutMs));
  const expirationMs = Math.round(total * 0.2);
  const graceMs = Math.min(1000, Math.round(total * 0.2));
  return { expirationMs, graceMs, budgetMs: total - expirationMs - graceMs };
}
