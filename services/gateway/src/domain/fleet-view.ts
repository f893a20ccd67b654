import {
  captureStatusOf,
  lastItemOf,
  NotFoundError,
  type AgentStatus,
  type CaptureStatus,
  type DeviceCaptureRecord,
  type DeviceDetail,
  type DeviceListing,
  type DevicesAnswer,
  type DevicesParameters,
  type DeviceSummary,
} from '@screenfleet/contracts';
import type { AgentSighting } from './operator-presence';

/**
 * An agent silent for this long after its heartbeat's ttl ran out is offline, not unresponsive
 * (UiPath Orchestrator's "Disconnected"): unresponsive covers a hung agent or a short network
 * cut, offline a desktop that is off. A goodbye makes it offline at once.
 */
export const AGENT_OFFLINE_AFTER_MS = 5 * 60_000;

export interface FleetClock {
  nowMs: number;
  /** CAPTURE_STALL_AFTER. */
  stallAfterMs: number;
}

/** capture_status (libs/contracts captureStatusOf: the alert's gauge uses the same rule). */
export function captureStatus(
  record: Pick<DeviceCaptureRecord, 'first_received_ms' | 'last_received_ms'> | undefined,
  clock: FleetClock,
): CaptureStatus {
  return captureStatusOf(record, clock.nowMs, clock.stallAfterMs);
}

/**
 * agent.status. online: a heartbeat within its ttl (3 heartbeat intervals); unresponsive:
 * past it, for up to AGENT_OFFLINE_AFTER_MS; offline: a goodbye, longer silence, or never heard
 * by this gateway (it knows heartbeats since it started reading the presence stream).
 */
export function agentStatus(sighting: AgentSighting | undefined, nowMs: number): AgentStatus {
  if (!sighting || sighting.gone || sighting.lastHeartbeatMs === undefined) return 'offline';
  const silent = nowMs - sighting.lastHeartbeatMs;
  if (silent <= sighting.ttlMs) return 'online';
  return silent <= sighting.ttlMs + AGENT_OFFLINE_AFTER_MS ? 'unresponsive' : 'offline';
}

export function toDeviceSummary(
  deviceName: string,
  record: DeviceCaptureRecord | undefined,
  sighting: AgentSighting | undefined,
  clock: FleetClock,
): DeviceSummary {
  const byType: DeviceSummary['capture']['by_content_type'] = {};
  let stored = 0;
  let lastHour = 0;
  let last24h = 0;
  for (const [type, counts] of Object.entries(record?.by_content_type ?? {})) {
    const [items, lastItemMs, hour, day] = counts;
    byType[type as keyof typeof byType] = {
      items_stored: items,
      last_item_time: iso(lastItemMs),
      items_last_hour: hour,
      items_last_24h: day,
    };
    stored += items;
    lastHour += hour;
    last24h += day;
  }
  return {
    device_name: deviceName,
    capture_status: captureStatus(record, clock),
    capture: {
      first_item_time: iso(record?.first_item_ms ?? null),
      last_item_time: iso(lastItemMs(record)),
      items_stored: stored,
      items_last_hour: lastHour,
      items_last_24h: last24h,
      by_content_type: byType,
    },
    agent: {
      status: agentStatus(sighting, clock.nowMs),
      last_heartbeat_time: iso(sighting?.lastHeartbeatMs ?? null),
    },
    archive: {
      items_archived: record?.items_archived ?? 0,
      last_archived_item_time: iso(record?.last_archived_item_ms ?? null),
    },
  };
}

/** The device's newest item time over its content types (ms), or null. */
export function lastItemMs(record: DeviceCaptureRecord | undefined): number | null {
  let last: number | null = null;
  for (const [, lastItem] of Object.values(record?.by_content_type ?? {})) {
    if (lastItem !== null && (last === null || lastItem > last)) last = lastItem;
  }
  return last;
}

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

/** One page of GET /devices: its devices in order, and how many match in all. */
export interface DevicesPage {
  names: string[];
  total: number;
}

/**
 * GET /devices, first step: every device the workers list or whose agent this gateway heard,
 * within `allowed` (a bound token's devices; all when absent), filtered, sorted, and the page
 * cut, on the listing rows (no counts: those are read for the page's devices only).
 */
export function pageOfDevices(
  listing: readonly DeviceListing[],
  sightings: ReadonlyMap<string, AgentSighting>,
  parameters: DevicesParameters,
  allowed: readonly string[] | undefined,
  clock: FleetClock,
): DevicesPage {
  const byName = new Map(listing.map((device) => [device.device_name, device]));
  const names = new Set([...byName.keys(), ...sightings.keys()]);
  const rows = [...names]
    .filter((name) => !allowed || allowed.includes(name))
    .map((name) => {
      const device = byName.get(name);
      return { name, device, lastItem: device ? lastItemOf(device) : null };
    })
    .filter(
      ({ name, device }) =>
        parameters.status === undefined ||
        captureStatus(device, clock) === parameters.status ||
        agentStatus(sightings.get(name), clock.nowMs) === parameters.status,
    )
    .sort(parameters.sort === 'last_item_time' ? newestFirst : byName_);
  return {
    names: rows
      .slice(parameters.offset, parameters.offset + parameters.limit)
      .map((row) => row.name),
    total: rows.length,
  };
}

/** GET /devices, second step: the page's summaries, from its devices' records with windows. */
export function devicesAnswer(
  page: DevicesPage,
  records: readonly DeviceCaptureRecord[],
  sightings: ReadonlyMap<string, AgentSighting>,
  parameters: DevicesParameters,
  clock: FleetClock,
): DevicesAnswer {
  const byName = new Map(records.map((record) => [record.device_name, record]));
  return {
    data: page.names.map((name) =>
      toDeviceSummary(name, byName.get(name), sightings.get(name), clock),
    ),
    pagination: { limit: parameters.limit, offset: parameters.offset, total: page.total },
  };
}

/**
 * GET /devices/{name}: the summary and its timeline; 404 for a device neither the store nor the
 * presence stream knows, and for one outside `allowed` (the same answer: nothing leaks).
 */
export function deviceDetail(
  deviceName: string,
  record: DeviceCaptureRecord | undefined,
  sighting: AgentSighting | undefined,
  allowed: readonly string[] | undefined,
  clock: FleetClock,
): DeviceDetail {
  const known =
    record !== undefined &&
    (Object.keys(record.by_content_type).length > 0 || record.items_archived > 0);
  if ((allowed && !allowed.includes(deviceName)) || (!known && !sighting) || !record?.timeline) {
    throw new NotFoundError(`no device "${deviceName}" is known`);
  }
  return { ...toDeviceSummary(deviceName, record, sighting, clock), timeline: record.timeline };
}

interface Row {
  name: string;
  lastItem: number | null;
}
const compare = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
const byName_ = (a: Row, b: Row) => compare(a.name, b.name);
const newestFirst = (a: Row, b: Row) => {
  if (a.lastItem === b.lastItem) return byName_(a, b);
  if (a.lastItem === null) return 1;
  if (b.lastItem === null) return -1;
  return b.lastItem - a.lastItem;
};
