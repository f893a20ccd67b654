import { Router } from 'express';
import { parseSearchQuery, searchRoute } from '@screenfleet/contracts';
import type { Bus } from '@screenfleet/bus';
import type { TokenGrant } from '../auth/tokens';
import { emptyAnswer, sendSearch, toSearchRequest } from '../domain/search-commands';
import { countedCall } from '../domain/worker-call';
import type { SearchMetrics } from '../metrics';
import { assertDeviceAllowed, requireScope, type AuthOptions } from './authenticate';

export const searchPath = searchRoute.path;

export interface SearchRoutesDeps {
  bus: Pick<Bus, 'call'>;
  auth: AuthOptions;
  metrics: SearchMetrics;
  /** How long the ingest workers have to answer (503 after); the request expires with it. */
  timeoutMs: number;
}

/**
 * GET /search, screenpipe's read-back, relayed to the ingest workers over `search.rpc` (the
 * gateway holds no store connection: docs/adr/0008). The gateway decides everything about the
 * request (the query's rules, relative times against its clock, which devices the token may
 * read) and relays the worker's answer as the body.
 */
export function searchRoutes(deps: SearchRoutesDeps): Router {
  const router = Router();
  router.get(searchPath, requireScope('search', deps.auth), async (req, res) => {
    const parameters = parseSearchQuery(req.query, new Date());
    const devices = devicesToSearch(res.locals.grant, parameters.deviceName);
    const request = toSearchRequest(parameters, devices);
    const answer = request
      ? await countedCall(deps.metrics, {}, () =>
          sendSearch(deps.bus, request, {
            timeoutMs: deps.timeoutMs,
            requestId: res.locals.requestId,
          }),
        )
      : emptyAnswer(parameters);
    // Captured screens: no cache may keep them, and the next search sees new items.
    res.set('Cache-Control', 'no-store').json(answer);
  });
  return router;
}

/**
 * The devices a search may read. A token bound to devices sees only those: a device_name
 * outside them is a 403 (as on /add), none means all of the token's devices. An unbound token
 * reads the named device, or every device (undefined).
 */
export function devicesToSearch(
  grant: TokenGrant,
  deviceName: string | undefined,
): readonly string[] | undefined {
  if (deviceName === undefined) return grant.devices;
  assertDeviceAllowed(grant, deviceName);
  return [deviceName];
}
