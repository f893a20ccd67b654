import type { ContentType } from '@screenfleet/contracts';
import {
  HOUR_MS,
  hourStart,
  windowStarts,
  type DeviceCounters,
  type DeviceCountersQuery,
} from './device-counters';
import type { SqliteReaders } from './sqlite-readers';
import type { CounterTables } from './sqlite.device-counters-schema';

type Row = [
  string,
  string,
  number,
  number | null,
  number | null,
  number | null,
  number | null,
  number,
  number,
];

/**
 * Reads the counters in one statement (one WAL snapshot, one row: the readers' rule). The
 * windows are summed from the hourly buckets here, windowShare's formula in SQL, so the
 * answer carries two numbers per (device, type) rather than their buckets.
 */
export async function readDeviceCounters(
  readers: SqliteReaders,
  t: CounterTables,
  query: DeviceCountersQuery,
): Promise<DeviceCounters[]> {
  const { lastHour, last24h } = windowStarts(query.now);
  const devices = query.devices === undefined ? null : JSON.stringify(query.devices);
  const only = (column: string) => `(?1 IS NULL OR ${column} IN (SELECT value FROM json_each(?1)))`;
  const share = (start: string) =>
    `min(1.0, max(0.0, (hour_ms + ${HOUR_MS} - ${start}) / ${HOUR_MS}.0))`;
  const hours =
    query.hoursSince === undefined
      ? `'[]'`
      : `(SELECT json_group_array(json_array(device_name, hour_ms, items)) FROM (
           SELECT device_name, hour_ms, sum(items) AS items FROM ${t.hours}
           WHERE hour_ms >= ?5 AND ${only('device_name')}
           GROUP BY device_name, hour_ms ORDER BY device_name, hour_ms))`;
  const [row] = await readers.query<{ counters: string; archive: string; hours: string }>(
    `SELECT
       (SELECT json_group_array(json_array(d.device_name, d.content_type, d.items_stored,
          d.first_item_ms, d.last_item_ms, d.first_received_ms, d.last_received_ms,
          coalesce(w.last_hour, 0), coalesce(w.last_day, 0)))
        FROM ${t.devices} AS d LEFT JOIN (
          SELECT device_name, content_type,
                 sum(items * ${share('?2')}) AS last_hour, sum(items * ${share('?3')}) AS last_day
          FROM ${t.hours} WHERE hour_ms >= ?4 AND ${only('device_name')}
          GROUP BY device_name, content_type) AS w
        USING (device_name, content_type)
        WHERE ${only('d.device_name')}) AS counters,
       (SELECT json_group_array(json_array(device_name, items_archived, last_archived_item_ms))
        FROM ${t.archive} WHERE ${only('device_name')}) AS archive,
       ${hours} AS hours`,
    [
      devices,
      lastHour,
      last24h,
      hourStart(last24h),
      query.hoursSince === undefined ? 0 : hourStart(query.hoursSince.getTime()),
    ],
  );
  return assemble(
    JSON.parse(row!.counters) as Row[],
    JSON.parse(row!.archive) as Array<[string, number, number | null]>,
    query.hoursSince === undefined
      ? undefined
      : (JSON.parse(row!.hours) as Array<[string, number, number]>),
  );
}

const date = (ms: number | null) => (ms === null ? null : new Date(ms));

function assemble(
  counters: Row[],
  archive: Array<[string, number, number | null]>,
  hours: Array<[string, number, number]> | undefined,
): DeviceCounters[] {
  const byDevice = new Map<string, DeviceCounters>();
  const device = (name: string): DeviceCounters => {
    let entry = byDevice.get(name);
    if (!entry) {
      entry = { deviceName: name, byContentType: [], itemsArchived: 0, lastArchivedItemTime: null };
      if (hours) entry.hours = [];
      byDevice.set(name, entry);
    }
    return entry;
  };
  for (const [name, type, stored, first, last, firstRx, lastRx, lastHour, lastDay] of counters) {
    device(name).byContentType.push({
      contentType: type as ContentType,
      itemsStored: stored,
      firstItemTime: date(first),
      lastItemTime: date(last),
      firstReceivedAt: date(firstRx),
      lastReceivedAt: date(lastRx),
      itemsLastHour: Math.round(lastHour),
      itemsLast24h: Math.round(lastDay),
    });
  }
  for (const [name, archived, last] of archive) {
    const entry = device(name);
    entry.itemsArchived = archived;
    entry.lastArchivedItemTime = date(last);
  }
  for (const [name, start, items] of hours ?? []) {
    device(name).hours!.push({ start: new Date(start), items });
  }
  const all = [...byDevice.values()];
  for (const entry of all) {
    entry.byContentType.sort((a, b) => (a.contentType < b.contentType ? -1 : 1));
  }
  return all.sort((a, b) =>
    a.deviceName < b.deviceName ? -1 : a.deviceName > b.deviceName ? 1 : 0,
  );
}
