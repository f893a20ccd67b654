import {
  captureStatusOf,
  NotFoundError,
  type AgentStatus,
  type CaptureStatus,
  type DeviceCaptureRecord,
  type DeviceDetail,
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
  record: DeviceCaptureRecord | undefined,
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
  const types = Object.values(record?.by_content_type ?? {});
  const sum = (pick: (t: (typeof types)[number]) => number) =>
    types.reduce((total, t) => total + pick(t), 0);
  const lastItem = types
    .map((t) => t.last_item_time)
    .filter((time): time is string => time !== null)
    .sort()
    .at(-1);
  return {
    device_name: deviceName,
    capture_status: captureStatus(record, clock),
    capture: {
      first_item_time: record?.first_item_time ?? null,
      last_item_time: lastItem ?? null,
      items_stored: sum((t) => t.items_stored),
      items_last_hour: sum((t) => t.items_last_hour),
      items_last_24h: sum((t) => t.items_last_24h),
      by_content_type: record?.by_content_type ?? {},
    },
    agent: {
      status: agentStatus(sighting, clock.nowMs),
      last_heartbeat_time:
        sighting?.lastHeartbeatMs === undefined
          ? null
          : new Date(sighting.lastHeartbeatMs).toISOString(),
    },
    archive: record?.archive ?? { items_archived: 0, last_archived_item_time: null },
  };
}

/**
 * GET /devices: every device the workers have counters for or whose agent this gateway heard,
 * within `allowed` (a bound token's devices; all when absent), filtered, sorted, paged.
 */
export function listDevices(
  records: readonly DeviceCaptureRecord[],
  sightings: ReadonlyMap<string, AgentSighting>,
  parameters: DevicesParameters,
  allowed: readonly string[] | undefined,
  clock: FleetClock,
): DevicesAnswer {
  const byName = new Map(records.map((record) => [record.device_name, record]));
  const names = new Set([...byName.keys(), ...sightings.keys()]);
  const visible = [...names].filter((name) => !allowed || allowed.includes(name));
  const summaries = visible
    .map((name) => toDeviceSummary(name, byName.get(name), sightings.get(name), clock))
    .filter(
      (d) =>
        parameters.status === undefined ||
        d.capture_status === parameters.status ||
        d.agent.status === parameters.status,
    )
    .sort(parameters.sort === 'last_item_time' ? newestFirst : byName_);
  return {
    data: summaries.slice(parameters.offset, parameters.offset + parameters.limit),
    pagination: { limit: parameters.limit, offset: parameters.offset, total: summaries.length },
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
    (Object.keys(record.by_content_type).length > 0 || record.archive.items_archived > 0);
  if ((allowed && !allowed.includes(deviceName)) || (!known && !sighting) || !record?.timeline) {
    throw new NotFoundError(`no device "${deviceName}" is known`);
  }
  return { ...toDeviceSummary(deviceName, record, sighting, clock), timeline: record.timeline };
}

const compare = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
const byName_ = (a: DeviceSummary, b: DeviceSummary) => compare(a.device_name, b.device_name);
const newestFirst = (a: DeviceSummary, b: DeviceSummary) => {
  const x = a.capture.last_item_time;
  const y = b.capture.last_item_time;
  if (x === y) return byName_(a, b);
  if (x === null) return 1;
  if (y === null) return -1;
  return compare(y, x);
};
