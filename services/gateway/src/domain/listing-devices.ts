/**
 * Which device a listing was made on, so that a press goes to the device its element_index was
 * read from: the device is resolved once, at listing time, and a press that names no device
 * follows its cache_id (or, without one, its token's newest listing) instead of resolving the
 * device again (another agent may have connected meanwhile). In memory and bounded: with several
 * gateways a press may reach one that did not see the listing; it then resolves the device as
 * before, and the agent still refuses a listing it does not hold or another token made.
 */
export class ListingDevices {
  private readonly byCacheId = new Map<string, { device: string; expiresAt: number }>();
  private readonly newestByToken = new Map<string, { device: string; expiresAt: number }>();

  constructor(
    private readonly maxEntries = 10_000,
    private readonly now: () => number = Date.now,
  ) {}

  remember(tokenId: string, cacheId: string, device: string, ttlMs: number): void {
    const entry = { device, expiresAt: this.now() + ttlMs };
    this.put(this.byCacheId, cacheId, entry);
    this.put(this.newestByToken, tokenId, entry);
  }

  /** The device of the listing named by cacheId, else of the token's newest listing. */
  deviceFor(tokenId: string, cacheId: string | undefined): string | undefined {
    const entry =
      cacheId === undefined ? this.newestByToken.get(tokenId) : this.byCacheId.get(cacheId);
    return entry && entry.expiresAt > this.now() ? entry.device : undefined;
  }

  private put<K>(
    map: Map<K, { device: string; expiresAt: number }>,
    key: K,
    entry: { device: string; expiresAt: number },
  ): void {
    map.delete(key); // re-insert: Map order is insertion order, the oldest goes first
    map.set(key, entry);
    while (map.size > this.maxEntries) {
      const oldest = map.keys().next();
      if (oldest.done) break;
      map.delete(oldest.value);
    }
  }
}
