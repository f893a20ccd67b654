import { searchTerms, type SearchRequest } from '@screenfleet/contracts';
import type { SearchQuery } from '@screenfleet/storage';

/**
 * A resolved search.request as the store's query. The gateway resolved every decision (times,
 * the token's devices); what is left is splitting `q` into the normalised terms the stores index.
 */
export function toStoreQuery(request: SearchRequest): SearchQuery {
  return {
    terms: searchTerms(request.q),
    contentTypes: request.content_types,
    ...(request.from !== undefined ? { from: new Date(request.from) } : {}),
    ...(request.to !== undefined ? { to: new Date(request.to) } : {}),
    ...(request.devices !== undefined ? { devices: request.devices } : {}),
    ...(request.app_name !== undefined ? { appName: request.app_name } : {}),
    ...(request.window_name !== undefined ? { windowName: request.window_name } : {}),
    ...(request.min_length !== undefined ? { minLength: request.min_length } : {}),
    ...(request.max_length !== undefined ? { maxLength: request.max_length } : {}),
    order: request.order,
    limit: request.limit,
    offset: request.offset,
  };
}
