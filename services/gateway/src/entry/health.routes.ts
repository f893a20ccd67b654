import { randomUUID } from 'node:crypto';
import { Router, type Request } from 'express';
import { healthRoute } from '@screenfleet/contracts';
import type { Bus } from '@screenfleet/bus';
import type { TokenGrant } from '../auth/tokens';
import { readNewestItemTimes } from '../domain/devices-commands';
import { healthReport, unavailablePart } from '../domain/health-report';
import { HealthSummaries, type SummaryResult } from '../domain/health-summary';
import { countedCall } from '../domain/worker-call';
import type { DevicesMetrics } from '../metrics';
import { assertTokenlessHost, identifyUncounted, type AuthOptions } from './authenticate';

export const healthPath = healthRoute.path;
/** How long /health waits for an ingest worker: its clients poll it every second or so. */
export const HEALTH_TIMEOUT_MS = 2000;

export interface HealthRoutesDeps {
  bus: Pick<Bus, 'call' | 'isConnected'>;
  auth: AuthOptions;
  metrics: DevicesMetrics;
  stallAfterMs: number;
  /** Host names besides loopback ones a tokenless /health may name (GATEWAY_HEALTH_ALLOWED_HOSTS). */
  allowedHosts: readonly string[];
  timeoutMs?: number;
  /** How long a summary is served before it is read again (HealthSummaries' default: 1 s). */
  maxAgeMs?: number;
}

const none: SummaryResult = { ok: true, newest: { frames: null, transcription: null } };

/**
 * GET /health for screenpipe's clients, which poll it without a token: always HTTP 200 with
 * the state in the body (`status`, `status_code`), as screenpipe answers. No device names. A
 * valid token bound to devices narrows the capture times to those devices; without a token (or
 * with one that is not valid: health must answer) they cover the fleet.
 *
 * Without a valid token the Host must be loopback or one the operator allowed (403 foreign_host):
 * a page reaching a loopback gateway through DNS rebinding sends its own name. Only the Host:
 * screenpipe's desktop app polls from a web view with an Origin of its own, and without CORS
 * headers no other page can read the answer. GATEWAY_HEALTH_ALLOWED_HOSTS widens /health only,
 * never the loopback switch's requests: behind a local reverse proxy every client is a loopback
 * peer, and the proxy's name would let them all in without a token.
 *
 * The times come from HealthSummaries (about one read a second per gateway, however many poll),
 * so /health never competes with searches for the ingest workers that serve both.
 */
export function healthRoutes(deps: HealthRoutesDeps): Router {
  const timeoutMs = deps.timeoutMs ?? HEALTH_TIMEOUT_MS;
  const summaries = new HealthSummaries({
    ...(deps.maxAgeMs ? { maxAgeMs: deps.maxAgeMs } : {}),
    read: (devices) =>
      countedCall(deps.metrics, {}, () =>
        readNewestItemTimes(deps.bus, devices, { timeoutMs, requestId: randomUUID() }),
      ),
  });
  const router = Router();
  router.get(healthPath, async (req, res) => {
    const grant = validGrant(req, deps.auth);
    if (!grant) assertTokenlessHost(req.get('host'), deps.allowedHosts);
    const allowed = grant?.devices;
    const summary: SummaryResult | undefined = !deps.bus.isConnected()
      ? undefined
      : allowed?.length === 0
        ? none
        : await summaries.get(allowed);
    const clock = { nowMs: Date.now(), stallAfterMs: deps.stallAfterMs };
    let answer;
    if (!summary) {
      answer = healthReport(undefined, ['broker'], clock);
    } else if (summary.ok) {
      answer = healthReport(summary.newest, [], clock);
    } else {
      const part = unavailablePart(summary.error);
      if (!part) throw summary.error;
      answer = healthReport(undefined, [part], clock);
    }
    res.set('Cache-Control', 'no-store').json(answer);
  });
  return router;
}

/** The grant of a valid bearer token; undefined without one, or with one that is not valid. */
function validGrant(req: Request, auth: AuthOptions): TokenGrant | undefined {
  if (!req.get('authorization')) return undefined;
  try {
    return identifyUncounted(req, auth);
  } catch {
    return undefined;
  }
}
