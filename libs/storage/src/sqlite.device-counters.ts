import {
  fromListingRow,
  type ContentType,
  type DeviceListing,
  type DeviceListingRow,
  type NewestItemTimes,
} from '@screenfleet/contracts';
import {
  compareNames,
  HOUR_MS,
  hourStart,
  windowStarts,
  type DeviceCounters,
  type DeviceCountersQuery,
} from './device-counters';
import type { ReadOptions, SqliteReaders } from './sqlite-readers';
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
  // Written out only when devices are named, so the planner seeks them by key (an `?1 IS NULL
  // OR` form made it scan every device's buckets for one device's timeline).
  const only = (column: string) =>
    devices === null ? '(?1 IS NULL)' : `${column} IN (SELECT value FROM json_each(?1))`;
  const shareOf = (start: string) =>
    `min(1.0, max(0.0, (h.hour_ms + ${HOUR_MS} - ${start}) / ${HOUR_MS}.0))`;
  const hours =
    query.hoursSince === undefined
      ? `'[]'`
      : `(SELECT json_group_array(json_array(device_name, hour_ms, items)) FROM (
           SELECT device_name, hour_ms, sum(items) AS items FROM ${t.hours}
           WHERE hour_ms >= ?5 AND ${only('device_name')}
           GROUP BY device_name, hour_ms ORDER BY device_name, hour_ms))`;
  // Each window a correlated sum over the device's own buckets (the hours table's key: device,
  // type, hour), so a read costs a few rows a device, not a scan and sort of every bucket.
  const windowSum = (share: string, from: string) =>
    `(SELECT coalesce(sum(items * ${share}), 0) FROM ${t.hours} AS h
      WHERE h.device_name = d.device_name AND h.content_type = d.content_type AND h.hour_ms >= ${from})`;
  const [row] = await readers.query<{ counters: string; archive: string; hours: string }>(
    `SELECT
       (SELECT json_group_array(json_array(d.device_name, d.content_type, d.items_stored,
          d.first_item_ms, d.last_item_ms, d.first_received_ms, d.last_received_ms,
          ${windowSum(shareOf('?2'), '?6')}, ${windowSum(shareOf('?3'), '?4')}))
        FROM ${t.devices} AS d
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
      hourStart(lastHour),
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

/**
 * The devices' listing rows in one statement: a device's rows per content type folded in SQL
 * into one tuple, so the answer is what the caller sends on (no per-type rows nor Dates made).
 * Devices known only by their archive counters (every item archived, counters forgotten) are
 * listed too, as deviceCounters lists them.
 */
export async function readDeviceListing(
  readers: SqliteReaders,
  t: CounterTables,
  devices: readonly string[] | undefined,
): Promise<DeviceListing[]> {
  const named = devices === undefined ? null : JSON.stringify(devices);
  // No parameter at all for every device (libsql reads a lone null as named parameters).
  const only = named === null ? 'TRUE' : 'device_name IN (SELECT value FROM json_each(?1))';
  const [row] = await readers.query<{ listing: string }>(
    `SELECT json_group_array(json_array(name, first_rx, last_rx, last_frame, last_tx)) AS listing
     FROM (
       SELECT n.device_name AS name,
         min(d.first_received_ms) AS first_rx,
         max(d.last_received_ms) AS last_rx,
         max(CASE WHEN d.content_type = 'frames' THEN d.last_item_ms END) AS last_frame,
         max(CASE WHEN d.content_type = 'transcription' THEN d.last_item_ms END) AS last_tx
       FROM (SELECT device_name FROM ${t.devices} WHERE ${only}
             UNION SELECT device_name FROM ${t.archive} WHERE ${only}) AS n
       LEFT JOIN ${t.devices} AS d ON d.device_name = n.device_name
       GROUP BY n.device_name)`,
    named === null ? [] : [named],
  );
  // The statement's tuples are devices.reply's listing rows, column for column.
  return (JSON.parse(row!.listing) as DeviceListingRow[])
    .map(fromListingRow)
    .sort((a, b) => compareNames(a.device_name, b.device_name));
}

/**
 * The newest item time per content type in one statement. Over every device, a max() per type
 * on the (content_type, last_item_ms) index: one seek each, however many devices there are.
 * Over named devices, their rows by the primary key (device_name, content_type), folded.
 */
export async function readNewestItemTimes(
  readers: SqliteReaders,
  t: CounterTables,
  devices: readonly string[] | undefined,
  options: ReadOptions = {},
): Promise<NewestItemTimes> {
  const newestOf = (type: string) =>
    `(SELECT max(last_item_ms) FROM ${t.devices} WHERE content_type = '${type}')`;
  const [row] =
    devices === undefined
      ? await readers.query<NewestItemTimes>(
          `SELECT ${newestOf('frames')} AS frames, ${newestOf('transcription')} AS transcription`,
          [],
          options,
        )
      : await readers.query<NewestItemTimes>(
          `SELECT max(CASE WHEN content_type = 'frames' THEN last_item_ms END) AS frames,
             max(CASE WHEN content_type = 'transcription' THEN last_item_ms END) AS transcription
           FROM ${t.devices} WHERE device_name IN (SELECT value FROM json_each(?1))`,
          [JSON.stringify(devices)],
          options,
        );
  return { frames: row?.frames ?? null, transcription: row?.transcription ?? null };
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
  return all.sort((a, b) => compareNames(a.deviceName, b.deviceName));
}
