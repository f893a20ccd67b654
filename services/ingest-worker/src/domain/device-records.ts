import type { DeviceCaptureRecord } from '@screenfleet/contracts';
import { HOUR_MS, hourStart, type DeviceCounters, type HourCount } from '@screenfleet/storage';

const DAY_MS = 24 * HOUR_MS;
export const TIMELINE_HOURS = 24;
export const TIMELINE_DAYS = 30;

/** Where the timeline starts: the UTC day 29 days before today's (30 days with today). */
export function timelineSince(now: Date): Date {
  return new Date(dayStart(now.getTime()) - (TIMELINE_DAYS - 1) * DAY_MS);
}

/**
 * The store's counters as devices.reply records: per content type what it holds, the device's
 * first item and received times, its archive counts, and with `timeline` the last 24 UTC hours
 * and 30 UTC days, oldest first, every bucket present (0 when empty).
 */
export function toDeviceRecords(
  counters: readonly DeviceCounters[],
  now: Date,
  timeline: boolean,
  /** With a timeline, each of these devices gets a record even with no counters (all zero). */
  requested: readonly string[] = [],
): DeviceCaptureRecord[] {
  const found = new Set(counters.map((device) => device.deviceName));
  const missing = timeline ? requested.filter((name) => !found.has(name)) : [];
  const all = [
    ...counters,
    ...missing.map((deviceName) => ({
      deviceName,
      byContentType: [],
      itemsArchived: 0,
      lastArchivedItemTime: null,
      hours: [],
    })),
  ];
  return all.map((device) => {
    const byType: DeviceCaptureRecord['by_content_type'] = {};
    let firstItem: number | undefined;
    let firstReceived: number | undefined;
    let lastReceived: number | undefined;
    for (const c of device.byContentType) {
      byType[c.contentType] = [
        c.itemsStored,
        c.lastItemTime?.getTime() ?? null,
        c.itemsLastHour,
        c.itemsLast24h,
      ];
      firstItem = earliest(firstItem, c.firstItemTime);
      firstReceived = earliest(firstReceived, c.firstReceivedAt);
      lastReceived = latest(lastReceived, c.lastReceivedAt);
    }
    return {
      device_name: device.deviceName,
      first_item_ms: firstItem ?? null,
      first_received_ms: firstReceived ?? null,
      last_received_ms: lastReceived ?? null,
      by_content_type: byType,
      items_archived: device.itemsArchived,
      last_archived_item_ms: device.lastArchivedItemTime?.getTime() ?? null,
      ...(timeline ? { timeline: toTimeline(device.hours ?? [], now) } : {}),
    };
  });
}

function toTimeline(
  hours: readonly HourCount[],
  now: Date,
): NonNullable<DeviceCaptureRecord['timeline']> {
  const thisHour = hourStart(now.getTime());
  const today = dayStart(now.getTime());
  const hourly = new Map<number, number>();
  const daily = new Map<number, number>();
  for (const { start, items } of hours) {
    const ms = start.getTime();
    hourly.set(ms, (hourly.get(ms) ?? 0) + items);
    const day = dayStart(ms);
    daily.set(day, (daily.get(day) ?? 0) + items);
  }
  const series = (last: number, step: number, n: number, from: Map<number, number>) =>
    Array.from({ length: n }, (_, i) => {
      const start = last - (n - 1 - i) * step;
      return { start: new Date(start).toISOString(), items: from.get(start) ?? 0 };
    });
  return {
    hourly: series(thisHour, HOUR_MS, TIMELINE_HOURS, hourly),
    daily: series(today, DAY_MS, TIMELINE_DAYS, daily),
  };
}

function dayStart(ms: number): number {
  return ms - (((ms % DAY_MS) + DAY_MS) % DAY_MS);
}

const earliest = (ms: number | undefined, date: Date | null) =>
  date === null ? ms : Math.min(ms ?? Infinity, date.getTime());
const latest = (ms: number | undefined, date: Date | null) =>
  date === null ? ms : Math.max(ms ?? -Infinity, date.getTime());
