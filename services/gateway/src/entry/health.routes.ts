import { Router } from 'express';
import type { Bus } from '@screenfleet/bus';
import { readDeviceListing } from '../domain/devices-commands';
import { healthReport, unavailablePart } from '../domain/health-report';
import type { DevicesMetrics } from '../metrics';
import { identify, type AuthOptions } from './authenticate';
import { countedCall } from './worker-call-metrics';

export const healthPath = '/health';
/** How long /health waits for an ingest worker: its clients poll it every second or so. */
export const HEALTH_TIMEOUT_MS = 2000;

export interface HealthRoutesDeps {
  bus: Pick<Bus, 'call' | 'isConnected'>;
  auth: AuthOptions;
  metrics: DevicesMetrics;
  stallAfterMs: number;
  timeoutMs?: number;
}

/**
 * GET /health for screenpipe's clients, which poll it without a token: always HTTP 200 with
 * the state in the body (`status`, `status_code`), as screenpipe answers. No device names. A
 * valid token bound to devices narrows the capture times to those devices; without a token (or
 * with one that is not valid: health must answer) they cover the fleet.
 */
export function healthRoutes(deps: HealthRoutesDeps): Router {
  const router = Router();
  router.get(healthPath, async (req, res) => {
    let allowed: readonly string[] | undefined;
    try {
      allowed = req.get('authorization') ? identify(req, deps.auth).devices : undefined;
    } catch {
      allowed = undefined;
    }
    const clock = { nowMs: Date.now(), stallAfterMs: deps.stallAfterMs };
    let answer;
    if (!deps.bus.isConnected()) {
      answer = healthReport(undefined, ['broker'], clock);
    } else {
      try {
        const listing =
          allowed?.length === 0
            ? []
            : await countedCall(deps.metrics, {}, () =>
                readDeviceListing(deps.bus, allowed, {
                  timeoutMs: deps.timeoutMs ?? HEALTH_TIMEOUT_MS,
                  requestId: res.locals.requestId,
                }),
              );
        answer = healthReport(listing, [], clock);
      } catch (error) {
        const part = unavailablePart(error);
        if (!part) throw error;
        answer = healthReport(undefined, [part], clock);
      }
    }
    res.set('Cache-Control', 'no-store').json(answer);
  });
  return router;
}
