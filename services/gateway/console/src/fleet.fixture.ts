import type { DeviceDetail, DeviceSummary } from '@screenfleet/contracts';

/**
 * A DeviceSummary as GET /devices answers it, with `overrides`: for the console's unit tests and
 * the Fleet render bench (bench/console.ts), which need many plausible devices without a store.
 */
export function buildDeviceSummary(
  name: string,
  overrides: Partial<Omit<DeviceSummary, 'device_name'>> = {},
): DeviceSummary {
  return {
    device_name: name,
    capture_status: 'ok',
    capture: {
      first_item_time: '2026-11-01T08:00:00.000Z',
      last_item_time: '2026-11-26T09:59:00.000Z',
      items_stored: 1200,
      items_last_hour: 40,
      items_last_24h: 600,
      by_content_type: {
        frames: {
          items_stored: 1000,
          last_item_time: '2026-11-26T09:59:00.000Z',
          items_last_hour: 35,
          items_last_24h: 500,
        },
        transcription: {
          items_stored: 200,
          last_item_time: '2026-11-26T09:50:00.000Z',
          items_last_hour: 5,
          items_last_24h: 100,
        },
      },
    },
    agent: { status: 'online', last_heartbeat_time: '2026-11-26T09:59:50.000Z' },
    archive: { items_archived: 300, last_archived_item_time: '2026-11-20T00:00:00.000Z' },
    ...overrides,
  };
}

const captureCycle = ['ok', 'ok', 'ok', 'stalled', 'idle'] as const;
const agentCycle = ['online', 'online', 'unresponsive', 'offline'] as const;

/** `count` devices with varied statuses and volumes (deterministic: the same on every run). */
export function buildFleet(
  count: number,
  now = Date.parse('2026-11-26T10:00:00Z'),
): DeviceSummary[] {
  return Array.from({ length: count }, (_, i) => {
    const recent = new Date(now - (i % 97) * 60_000).toISOString();
    const base = buildDeviceSummary(`desk-${String(i).padStart(4, '0')}`);
    const perDay = (i * 37) % 2000;
    return {
      ...base,
      capture_status: captureCycle[i % captureCycle.length]!,
      capture: {
        ...base.capture,
        last_item_time: recent,
        items_last_24h: perDay,
        items_stored: perDay * 20,
        by_content_type: {
          frames: {
            ...base.capture.by_content_type.frames!,
            items_last_24h: perDay - (perDay >> 2),
          },
          transcription: {
            ...base.capture.by_content_type.transcription!,
            items_last_24h: perDay >> 2,
          },
        },
      },
      agent: { status: agentCycle[i % agentCycle.length]!, last_heartbeat_time: recent },
      archive: { items_archived: (i * 13) % 5000, last_archived_item_time: recent },
    };
  });
}

/** A DeviceDetail as GET /devices/{name} answers it: the summary and an empty timeline. */
export function buildDeviceDetail(
  name: string,
  overrides: Partial<Omit<DeviceSummary, 'device_name'>> = {},
  now = Date.parse('2026-11-26T10:00:00Z'),
): DeviceDetail {
  const buckets = (count: number, ms: number) =>
    Array.from({ length: count }, (_, i) => ({
      start: new Date(now - (count - i) * ms).toISOString(),
      items: 0,
    }));
  return {
    ...buildDeviceSummary(name, overrides),
    timeline: { hourly: buckets(24, 3_600_000), daily: buckets(30, 86_400_000) },
  };
}
