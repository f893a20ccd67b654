import type { Collection, Filter, Document } from 'mongodb';

/**
 * Waits until the store holds `expected` documents matching `filter` (or the time is up) and
 * returns the count. The worker runs in another process, so there is no event to wait for;
 * callers assert the exact count afterwards.
 */
export async function waitForCount<T extends Document>(
  collection: Collection<T>,
  filter: Filter<T>,
  expected: number,
  timeoutMs = 30_000,
): Promise<number> {
  const deadline = Date.now() + timeoutMs;
  let count = await collection.countDocuments(filter);
  while (count < expected && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    count = await collection.countDocuments(filter);
  }
  return count;
}
