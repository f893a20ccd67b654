import type { ListElementsResponse } from '@screenfleet/contracts';

/**
 * A listing is usable for its snapshot's time to live (the agent's OPERATOR_SNAPSHOT_TTL): past
 * cache_info.expires_at the agent refuses actions on it (409), so the view says it is stale and
 * offers to list again. Milliseconds past expiry, or undefined while it is fresh.
 */
export function expiredFor(
  cacheInfo: Pick<ListElementsResponse['cache_info'], 'expires_at'>,
  now: Date,
): number | undefined {
  const past = now.getTime() - new Date(cacheInfo.expires_at).getTime();
  return past >= 0 ? past : undefined;
}
