import { setTimeout as sleep } from 'node:timers/promises';

export interface WaitForOptions {
  /** Give up after this long. */
  timeoutMs: number;
  /** Pause between two checks; default 50 ms. */
  intervalMs?: number;
  /**
   * What is awaited, for the error ("FerretDB to listen on 127.0.0.1:27017"); a function is read
   * only on timeout, so it can tell the last state seen.
   */
  what: string | (() => string);
}

type NotYet = false | null | undefined;

/** The condition did not hold in time (as opposed to an error the condition threw). */
export class WaitTimeoutError extends Error {
  override name = 'WaitTimeoutError';
}

/**
 * Checks `condition` until it returns something other than false, null or undefined, and
 * resolves with that; rejects naming `what` once `timeoutMs` has passed. For states with no
 * event to listen to (another process's port, a count in a database): where an event exists,
 * wait for the event instead. An error thrown by `condition` rejects at once.
 */
export async function waitFor<T>(
  condition: () => T | NotYet | Promise<T | NotYet>,
  options: WaitForOptions,
): Promise<T> {
  const { timeoutMs, intervalMs = 50 } = options;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await condition();
    if (value !== false && value !== null && value !== undefined) return value;
    if (Date.now() >= deadline) {
      const what = typeof options.what === 'function' ? options.what() : options.what;
      throw new WaitTimeoutError(`timed out after ${timeoutMs} ms waiting for ${what}`);
    }
    await sleep(Math.min(intervalMs, Math.max(0, deadline - Date.now())));
  }
}
