import type { Collection, Filter, Document } from 'mongodb';
import { waitFor, WaitTimeoutError } from '@screenfleet/runtime';

/**
 * Waits until the store holds `expected` documents matching `filter` (or the time is up) and
 * returns the count. The worker runs in another process, so there is no event to wait for;
 * callers assert the exact count afterwards, which says more than a timeout would.
 */
export async function waitForCount<T extends Document>(
  collection: Collection<T>,
  filter: Filter<T>,
  expected: number,
  timeoutMs = 30_000,
): Promise<number> {
  let count = 0;
  await waitFor(async () => (count = await collection.countDocuments(filter)) >= expected, {
    timeoutMs,
    what: `${expected} documents`,
  }).catch((error: unknown) => {
    if (!(error instanceof WaitTimeoutError)) throw error;
  });
  return count;
}
