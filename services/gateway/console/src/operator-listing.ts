import type { ListElementsResponse } from '@screenfleet/contracts';

/**
 * A listing is usable for its snapshot's time to live (the agent's OPERATOR_SNAPSHOT_TTL): past
 * cache_info.expires_at the agent refuses actions on it (409), so the view says it is stale and
 * offers to list again. Milliseconds until then; zero or less once it has expired.
 */
export function msUntilExpiry(
  cacheInfo: Pick<ListElementsResponse['cache_info'], 'expires_at'>,
  now: Date,
): number {
  return new Date(cacheInfo.expires_at).getTime() - now.getTime();
}
