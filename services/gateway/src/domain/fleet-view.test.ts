import type { DeviceCaptureRecord, DevicesParameters } from '@screenfleet/contracts';
import {
  AGENT_OFFLINE_AFTER_MS,
  agentStatus,
  captureStatus,
  deviceDetail,
  devicesAnswer,
  pageOfDevices,
} from './fleet-view';
import type { AgentSighting } from './operator-presence';

const NOW = Date.parse('2026-11-22T10:00:00Z');
const clock = { nowMs: NOW, stallAfterMs: 300_000 };
const ago = (ms: number) => new Date(NOW - ms).toISOString();
const msAgo = (ms: number) => NOW - ms;

function record(name: string, overrides: Partial<DeviceCaptureRecord> = {}): DeviceCaptureRecord {
  return {
    device_name: name,
    first_item_ms: msAgo(3_600_000),
    first_received_ms: msAgo(3_600_000),
    last_received_ms: msAgo(1000),
    by_content_type: { frames: [10, msAgo(1000), 4, 10] },
    items_archived: 0,
    last_archived_item_ms: null,
    ...overrides,
  };
}

const params = { limit: 50, offset: 0, sort: 'device_name' as const };

/** GET /devices' two steps: the page from the records' listing rows, then its summaries. */
function listDevices(
  records: readonly DeviceCaptureRecord[],
  sightings: ReadonlyMap<string, AgentSighting>,
  parameters: DevicesParameters,
  allowed: readonly string[] | undefined,
  at: typeof clock,
) {
  const listing = records.map((r) => ({
    device_name: r.device_name,
    first_received_ms: r.first_received_ms,
    last_received_ms: r.last_received_ms,
    last_frame_ms: r.by_content_type.frames?.[1] ?? null,
    last_transcription_ms: r.by_content_type.transcription?.[1] ?? null,
  }));
  const page = pageOfDevices(listing, sightings, parameters, allowed, at);
  return devicesAnswer(page, records, sightings, parameters, at);
}

describe('capture status', () => {
  it('when a batch came within CAPTURE_STALL_AFTER, then ok', () => {
    expect(captureStatus(record('a', { last_received_ms: msAgo(299_000) }), clock)).toBe('ok');
  });

  it('when a device that sent at two moments is silent longer, then stalled', () => {
    expect(captureStatus(record('a', { last_received_ms: msAgo(301_000) }), clock)).toBe('stalled');
  });

  it('when a device sent one batch only and not lately, or nothing, then idle', () => {
    const once = msAgo(400_000);
    expect(
      captureStatus(record('a', { first_received_ms: once, last_received_ms: once }), clock),
    ).toBe('idle');
    expect(captureStatus(undefined, clock)).toBe('idle');
  });
});

describe('agent status', () => {
  const seen = (silentMs: number, gone = false): AgentSighting => ({
    lastHeartbeatMs: NOW - silentMs,
    ttlMs: 6000,
    gone,
  });

  it('when a heartbeat is within its ttl, then online; past it, unresponsive; much later, offline', () => {
    expect(agentStatus(seen(5000), NOW)).toBe('online');
    expect(agentStatus(seen(7000), NOW)).toBe('unresponsive');
    expect(agentStatus(seen(6000 + AGENT_OFFLINE_AFTER_MS + 1), NOW)).toBe('offline');
  });

  it('when the agent said goodbye or was never heard, then offline', () => {
    expect(agentStatus(seen(1000, true), NOW)).toBe('offline');
    expect(agentStatus(undefined, NOW)).toBe('offline');
  });
});

describe('the device list', () => {
  const records = [
    record('b'),
    record('a', { last_received_ms: msAgo(400_000), by_content_type: {} }),
    record('c', {
      by_content_type: { frames: [1, msAgo(10), 1, 1], transcription: [2, msAgo(5), 2, 2] },
    }),
  ];
  const sightings = new Map<string, AgentSighting>([
    ['agent-only', { lastHeartbeatMs: NOW - 1000, ttlMs: 6000, gone: false }],
  ]);

  it('when listed, then devices with counters and devices only heard of come sorted by name, totals summed over types', () => {
    const answer = listDevices(records, sightings, params, undefined, clock);
    expect(answer.data.map((d) => d.device_name)).toEqual(['a', 'agent-only', 'b', 'c']);
    expect(answer.pagination).toEqual({ limit: 50, offset: 0, total: 4 });
    const c = answer.data.find((d) => d.device_name === 'c');
    expect(c?.capture).toMatchObject({
      items_stored: 3,
      items_last_hour: 3,
      last_item_time: ago(5),
    });
    expect(answer.data.find((d) => d.device_name === 'agent-only')).toMatchObject({
      capture_status: 'idle',
      agent: { status: 'online', last_heartbeat_time: ago(1000) },
      capture: { items_stored: 0, last_item_time: null, by_content_type: {} },
    });
  });

  it('when filtered by a capture or an agent status, then only those match and total counts them', () => {
    const stalled = listDevices(
      records,
      sightings,
      { ...params, status: 'stalled' },
      undefined,
      clock,
    );
    expect(stalled.data.map((d) => d.device_name)).toEqual(['a']);
    const online = listDevices(
      records,
      sightings,
      { ...params, status: 'online' },
      undefined,
      clock,
    );
    expect(online.data.map((d) => d.device_name)).toEqual(['agent-only']);
    expect(online.pagination.total).toBe(1);
  });

  it('when sorted by last item time, then newest first and devices with none last; pages slice it', () => {
    const sorted = listDevices(
      records,
      sightings,
      { ...params, sort: 'last_item_time' },
      undefined,
      clock,
    );
    expect(sorted.data.map((d) => d.device_name)).toEqual(['c', 'b', 'a', 'agent-only']);
    const page = listDevices(
      records,
      sightings,
      { ...params, limit: 2, offset: 1 },
      undefined,
      clock,
    );
    expect(page.data.map((d) => d.device_name)).toEqual(['agent-only', 'b']);
    expect(page.pagination.total).toBe(4);
  });

  it('when the token is bound, then only its devices are listed', () => {
    const answer = listDevices(records, sightings, params, ['b', 'agent-only'], clock);
    expect(answer.data.map((d) => d.device_name)).toEqual(['agent-only', 'b']);
  });
});

describe('one device', () => {
  const timeline = { hourly: [], daily: [] };

  it("when the device is unknown, or not the token's, then not found alike", () => {
    const empty = record('x', { by_content_type: {}, timeline });
    expect(() => deviceDetail('x', empty, undefined, undefined, clock)).toThrow('no device "x"');
    expect(() => deviceDetail('b', record('b', { timeline }), undefined, ['a'], clock)).toThrow(
      'no device "b"',
    );
  });

  it('when known, then the summary comes with its timeline', () => {
    const detail = deviceDetail('b', record('b', { timeline }), undefined, undefined, clock);
    expect(detail).toMatchObject({ device_name: 'b', capture_status: 'ok', timeline });
  });
});
