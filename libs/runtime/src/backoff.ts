export interface BackoffOptions {
  initialMs: number;
  maxMs: number;
}

/**
 * Exponential delay for the n-th retry (1-based), with +-20% jitter so a fleet of
 * processes dropped by one outage does not come back in lockstep. Never above maxMs.
 */
export function backoffDelay(
  { initialMs, maxMs }: BackoffOptions,
  attempt: number,
  random = Math.random,
): number {
  const base = Math.min(maxMs, initialMs * 2 ** Math.max(0, attempt - 1));
  const jittered = base * (0.8 + 0.4 * random());
  return Math.round(Math.min(maxMs, jittered));
}
