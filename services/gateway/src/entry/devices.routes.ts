import { Router } from 'express';
import {
  deviceRoute,
  devicesRoute,
  parseDevicesQuery,
  validators,
  NotFoundError,
} from '@screenfleet/contracts';
import type { Bus } from '@screenfleet/bus';
import { readDeviceListing, readDeviceRecords } from '../domain/devices-commands';
import { deviceDetail, devicesAnswer, pageOfDevices } from '../domain/fleet-view';
import type { OperatorPresenceTracker } from '../domain/operator-presence';
import { countedCall } from '../domain/worker-call';
import type { DevicesMetrics } from '../metrics';
import { requireScope, type AuthOptions } from './authenticate';

export const devicesPath = devicesRoute.path;
/** The metrics' route label for GET /devices/{name} (bounded: not the name itself). */
export const deviceRouteLabel = deviceRoute.path;

export interface DevicesRoutesDeps {
  bus: Pick<Bus, 'call'>;
  auth: AuthOptions;
  presence: Pick<OperatorPresenceTracker, 'sightings'>;
  metrics: DevicesMetrics;
  timeoutMs: number;
  /** CAPTURE_STALL_AFTER. */
  stallAfterMs: number;
}

/**
 * GET /devices and GET /devices/{name} (scope `search`, the read scope): the ingest workers'
 * per-device counters (over search.rpc: the gateway holds no store, ADR 0008) joined with the
 * agents' heartbeats this gateway reads; statuses, filter, sort and paging are decided here
 * (domain/fleet-view.ts). A device-bound token sees only its devices; another is a 404.
 */
export function devicesRoutes(deps: DevicesRoutesDeps): Router {
  const router = Router();
  const read = (
    devices: readonly string[] | undefined,
    what: { timeline?: boolean },
    requestId: string,
  ) =>
    countedCall(deps.metrics, {}, () =>
      readDeviceRecords(
        deps.bus,
        { ...(devices ? { devices: [...devices] } : {}), ...what },
        { timeoutMs: deps.timeoutMs, requestId },
      ),
    );
  const list = (devices: readonly string[] | undefined, requestId: string) =>
    countedCall(deps.metrics, {}, () =>
      readDeviceListing(deps.bus, devices, { timeoutMs: deps.timeoutMs, requestId }),
    );
  const clock = () => ({ nowMs: Date.now(), stallAfterMs: deps.stallAfterMs });

  router.get(devicesPath, requireScope('search', deps.auth), async (req, res) => {
    const parameters = parseDevicesQuery(req.query);
    const allowed = res.locals.grant.devices;
    const sightings = deps.presence.sightings();
    const now = clock();
    // Every device's listing row (no counts: they cost a read of its recent buckets), sorted,
    // filtered and paged; then the records with counts of the page's devices only.
    const listing = allowed?.length === 0 ? [] : await list(allowed, res.locals.requestId);
    const page = pageOfDevices(listing, sightings, parameters, allowed, now);
    const counted = new Set(listing.map((device) => device.device_name));
    const withCounters = page.names.filter((name) => counted.has(name));
    const records =
      withCounters.length === 0 ? [] : await read(withCounters, {}, res.locals.requestId);
    res
      .set('Cache-Control', 'no-store')
      .json(devicesAnswer(page, records, sightings, parameters, now));
  });

  // Express writes a path parameter `:name`, OpenAPI `{name}`.
  router.get(
    deviceRoute.path.replace(/\{(\w+)\}/g, ':$1'),
    requireScope('search', deps.auth),
    async (req, res) => {
      const name = String(req.params.name);
      const allowed = res.locals.grant.devices;
      // A name no device can have, or one the token may not see: the unknown device's 404.
      if (
        validators.devicesRequest.check({ devices: [name] }).length > 0 ||
        (allowed && !allowed.includes(name))
      ) {
        throw new NotFoundError(`no device "${name.slice(0, 200)}" is known`);
      }
      const [record] = await read([name], { timeline: true }, res.locals.requestId);
      const detail = deviceDetail(
        name,
        record,
        deps.presence.sightings().get(name),
        allowed,
        clock(),
      );
      res.set('Cache-Control', 'no-store').json(detail);
    },
  );
  return router;
}
