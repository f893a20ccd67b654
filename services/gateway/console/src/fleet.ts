import type { AgentStatus, CaptureStatus, DeviceSummary } from '@screenfleet/contracts';
import type { Scope } from './session.js';

/**
 * The Fleet view's state and the rules behind its columns, kept apart from the view so they are
 * unit-tested: the filter (in the page's hash: `#/fleet?capture=stalled&name=desk`, so reload
 * and Back keep the user's place), the archive share and the 24-hour bar's scale.
 */

/** The scope GET /devices and GET /devices/{name} need: the Fleet and Device views' scope. */
export const fleetScope: Scope = 'search';

export const captureStatuses: readonly CaptureStatus[] = ['ok', 'stalled', 'idle'];
export const agentStatuses: readonly AgentStatus[] = ['online', 'unresponsive', 'offline'];

export const captureLabels = { ok: 'OK', stalled: 'Stalled', idle: 'Idle' } as const;
export const agentLabels = {
  online: 'Online',
  unresponsive: 'Unresponsive',
  offline: 'Offline',
} as const;

export interface FleetFilter {
  /** '' = any. */
  capture: CaptureStatus | '';
  agent: AgentStatus | '';
  /** Part of the device's name, case ignored; '' = any. */
  name: string;
}

const oneOf = <T extends string>(values: readonly T[], value: string | null): T | '' =>
  values.find((v) => v === value) ?? '';

export function readFleetFilter(query: URLSearchParams): FleetFilter {
  return {
    capture: oneOf(captureStatuses, query.get('capture')),
    agent: oneOf(agentStatuses, query.get('agent')),
    name: query.get('name') ?? '',
  };
}

/** The hash's query: only what is set. */
export function writeFleetFilter(filter: FleetFilter): URLSearchParams {
  const query = new URLSearchParams();
  if (filter.capture) query.set('capture', filter.capture);
  if (filter.agent) query.set('agent', filter.agent);
  if (filter.name.trim()) query.set('name', filter.name.trim());
  return query;
}

export function filterDevices(
  devices: readonly DeviceSummary[],
  filter: FleetFilter,
): DeviceSummary[] {
  const part = filter.name.trim().toLowerCase();
  return devices.filter(
    (d) =>
      (!filter.capture || d.capture_status === filter.capture) &&
      (!filter.agent || d.agent.status === filter.agent) &&
      (!part || d.device_name.toLowerCase().includes(part)),
  );
}

/** How many devices have each capture status, for the filter's options. */
export function captureCounts(devices: readonly DeviceSummary[]): Record<CaptureStatus, number> {
  const counts: Record<CaptureStatus, number> = { ok: 0, stalled: 0, idle: 0 };
  for (const d of devices) counts[d.capture_status] += 1;
  return counts;
}

export function agentCounts(devices: readonly DeviceSummary[]): Record<AgentStatus, number> {
  const counts: Record<AgentStatus, number> = { online: 0, unresponsive: 0, offline: 0 };
  for (const d of devices) counts[d.agent.status] += 1;
  return counts;
}

/**
 * The share of a device's items that the archive holds: archived / (archived + still stored
 * locally), since a pass moves items out of the store. Undefined for a device with no items.
 */
export function archiveShare(device: DeviceSummary): number | undefined {
  const archived = device.archive.items_archived;
  const all = archived + device.capture.items_stored;
  return all === 0 ? undefined : archived / all;
}

/** The scale of the fleet's 24-hour bars: the busiest device's count (at least 1). */
export function busiest24h(devices: readonly DeviceSummary[]): number {
  let most = 1;
  for (const d of devices) if (d.capture.items_last_24h > most) most = d.capture.items_last_24h;
  return most;
}

/** The names of devices whose agent is online: what the Operator can act on. */
export const onlineDeviceNames = (devices: readonly DeviceSummary[]): string[] =>
  devices.filter((d) => d.agent.status === 'online').map((d) => d.device_name);
