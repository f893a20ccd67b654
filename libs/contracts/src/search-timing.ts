/**
 * How the gateway's wait for a search (GATEWAY_SEARCH_TIMEOUT) is split, so that a search is
 * stopped before the gateway gives up on it, never left to run for a client that got its 503:
 *
 *     timeoutMs (the gateway's whole wait) = expirationMs + budgetMs + graceMs
 *
 * - expirationMs: the request's expiration on search.rpc; a search no worker took by then is
 *   dropped unrun.
 * - budgetMs: carried in the request (budget_ms). The worker's store stops the search that long
 *   after the worker took it (SQLite interrupts it, MongoDB's maxTimeMS) and the worker answers
 *   `deadline_exceeded`, which the gateway answers 503. Only the worker's own clock measures it.
 * - graceMs: the answer's trip back: a tenth, at least 200 ms (a quarter of waits under 800 ms)
 *   and at most 1 s. A loaded machine is late to stop a search and to carry its answer by tens of
 *   milliseconds; a tenth of a short wait would let the gateway give up ("no answer") just
 *   before the worker's "stopped at its deadline" arrives.
 */
export interface SearchTimings {
  expirationMs: number;
  budgetMs: number;
  graceMs: number;
}

export function searchTimings(timeoutMs: number): SearchTimings {
  const total = Math.max(1, Math.floor(timeoutMs));
  const expirationMs = Math.max(1, Math.round(total * 0.2));
  const graceMs = Math.min(
    1000,
    Math.max(Math.round(total * 0.1), Math.min(200, Math.round(total * 0.25))),
  );
  return { expirationMs, graceMs, budgetMs: Math.max(1, total - expirationMs - graceMs) };
}
