import type Database from 'libsql';
import type { ContentDocument } from './content-store';
import { HOUR_MS, hourStart } from './device-counters';
import { tableName } from './sqlite-connection';

type Statements = (sql: string) => Database.Statement;

/** The counter tables beside a content table (names checked and quoted for SQL text). */
export interface CounterTables {
  /** One row per (device, content type): totals and first/last times. */
  devices: string;
  /** One row per (device, content type, UTC hour) with items stored. */
  hours: string;
  /** One row per device: what archive passes moved out. */
  archive: string;
  hoursIndex: string;
  /** (content_type, last_item_ms) on `devices`: the fleet's newest item of a type is one seek. */
  newestIndex: string;
}

export function counterTables(contentName: string): CounterTables {
  return {
    devices: tableName(`${contentName}_devices`, 'table'),
    hours: tableName(`${contentName}_device_hours`, 'table'),
    archive: tableName(`${contentName}_device_archive`, 'table'),
    hoursIndex: tableName(`${contentName}_device_hours_hour`, 'index'),
    newestIndex: tableName(`${contentName}_devices_newest`, 'index'),
  };
}

// Times in ms since the epoch (UTC), as timestamp_ms. WITHOUT ROWID: every read is by the key.
const createCounters = (t: CounterTables) => `
  CREATE TABLE IF NOT EXISTS ${t.devices} (
    device_name TEXT NOT NULL,
    content_type TEXT NOT NULL,
    items_stored INTEGER NOT NULL,
    first_item_ms INTEGER,
    last_item_ms INTEGER,
    first_received_ms INTEGER,
    last_received_ms INTEGER,
    PRIMARY KEY (device_name, content_type)
  ) WITHOUT ROWID;
  CREATE INDEX IF NOT EXISTS ${t.newestIndex} ON ${t.devices} (content_type, last_item_ms);
  CREATE TABLE IF NOT EXISTS ${t.hours} (
    device_name TEXT NOT NULL,
    content_type TEXT NOT NULL,
    hour_ms INTEGER NOT NULL,
    items INTEGER NOT NULL,
    PRIMARY KEY (device_name, content_type, hour_ms)
  ) WITHOUT ROWID;
  CREATE INDEX IF NOT EXISTS ${t.hoursIndex} ON ${t.hours} (hour_ms, device_name, content_type, items);
  CREATE TABLE IF NOT EXISTS ${t.archive} (
    device_name TEXT PRIMARY KEY,
    items_archived INTEGER NOT NULL,
    last_archived_item_ms INTEGER
  ) WITHOUT ROWID;`;

/**
 * Creates the counter tables; when they are new beside items already stored (a file written
 * before counters existed), counts those items once, in the same transaction.
 */
export function ensureCounterSchema(
  db: Database.Database,
  sql: Statements,
  contentTable: string,
  t: CounterTables,
): void {
  const name = t.devices.slice(1, -1);
  const existed = db
    .prepare(`SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = ?`)
    .get(name);
  db.exec(createCounters(t));
  if (!existed) {
    const devices = db.prepare(`SELECT DISTINCT device_name FROM ${contentTable}`).all() as Array<{
      device_name: string;
    }>;
    for (const { device_name } of devices) recountDevice(sql, contentTable, t, device_name);
  }
}

/** One stored batch's additions, per (device, type) and per (device, type, hour). */
interface Added {
  device: string;
  type: string;
  items: number;
  firstItem: number;
  lastItem: number;
  firstReceived: number;
  lastReceived: number;
  hours: Map<number, number>;
}

/** Collects the newly stored items of one insert; `flush` writes them in its transaction. */
export function counterAdditions() {
  const added = new Map<string, Added>();
  return {
    add(doc: ContentDocument): void {
      const key = `${doc.device_name}\u0000${doc.content_type}`;
      const time = doc.timestamp.getTime();
      const received = doc.received_at.getTime();
      let entry = added.get(key);
      if (!entry) {
        entry = {
          device: doc.device_name,
          type: doc.content_type,
          items: 0,
          firstItem: time,
          lastItem: time,
          firstReceived: received,
          lastReceived: received,
          hours: new Map(),
        };
        added.set(key, entry);
      }
      entry.items += 1;
      entry.firstItem = Math.min(entry.firstItem, time);
      entry.lastItem = Math.max(entry.lastItem, time);
      entry.firstReceived = Math.min(entry.firstReceived, received);
      entry.lastReceived = Math.max(entry.lastReceived, received);
      const hour = hourStart(time);
      entry.hours.set(hour, (entry.hours.get(hour) ?? 0) + 1);
    },
    flush(sql: Statements, t: CounterTables): void {
      for (const entry of added.values()) {
        sql(
          `INSERT INTO ${t.devices} (device_name, content_type, items_stored, first_item_ms,
             last_item_ms, first_received_ms, last_received_ms)
           VALUES (?, ?, ?, ?, ?, ?, ?)
           ON CONFLICT (device_name, content_type) DO UPDATE SET
             items_stored = items_stored + excluded.items_stored,
             first_item_ms = min(coalesce(first_item_ms, excluded.first_item_ms), excluded.first_item_ms),
             last_item_ms = max(coalesce(last_item_ms, excluded.last_item_ms), excluded.last_item_ms),
             first_received_ms = min(coalesce(first_received_ms, excluded.first_received_ms), excluded.first_received_ms),
             last_received_ms = max(coalesce(last_received_ms, excluded.last_received_ms), excluded.last_received_ms)`,
        ).run(
          entry.device,
          entry.type,
          entry.items,
          entry.firstItem,
          entry.lastItem,
          entry.firstReceived,
          entry.lastReceived,
        );
        for (const [hour, items] of entry.hours)
          addHour(sql, t, entry.device, entry.type, hour, items);
      }
      added.clear();
    },
  };
}

function addHour(
  sql: Statements,
  t: CounterTables,
  device: string,
  type: string,
  hour: number,
  items: number,
): void {
  sql(
    `INSERT INTO ${t.hours} (device_name, content_type, hour_ms, items) VALUES (?, ?, ?, ?)
     ON CONFLICT (device_name, content_type, hour_ms) DO UPDATE SET items = items + excluded.items`,
  ).run(device, type, hour, items);
}

/**
 * Subtracts the items about to be deleted (`ids`, as JSON) from their devices' counters, and
 * when they were archived adds them to the archive counters. Call it in the delete's
 * transaction, before the rows go.
 */
export function subtractDeleted(
  sql: Statements,
  contentTable: string,
  t: CounterTables,
  idsJson: string,
  archived: boolean,
): void {
  // hour_ms as hourStart(): floor, also before 1970.
  const groups = sql(
    `SELECT device_name, content_type,
            timestamp_ms - (((timestamp_ms % ${HOUR_MS}) + ${HOUR_MS}) % ${HOUR_MS}) AS hour_ms,
            count(*) AS items, max(timestamp_ms) AS last_ms
     FROM ${contentTable} WHERE id IN (SELECT value FROM json_each(?))
     GROUP BY 1, 2, 3`,
  ).all(idsJson) as Array<{
    device_name: string;
    content_type: string;
    hour_ms: number;
    items: number;
    last_ms: number;
  }>;
  for (const g of groups) {
    sql(
      `UPDATE ${t.devices} SET items_stored = max(0, items_stored - ?)
       WHERE device_name = ? AND content_type = ?`,
    ).run(g.items, g.device_name, g.content_type);
    sql(
      `UPDATE ${t.hours} SET items = items - ? WHERE device_name = ? AND content_type = ? AND hour_ms = ?`,
    ).run(g.items, g.device_name, g.content_type, g.hour_ms);
    sql(
      `DELETE FROM ${t.hours} WHERE device_name = ? AND content_type = ? AND hour_ms = ? AND items <= 0`,
    ).run(g.device_name, g.content_type, g.hour_ms);
    if (archived) {
      sql(
        `INSERT INTO ${t.archive} (device_name, items_archived, last_archived_item_ms) VALUES (?, ?, ?)
         ON CONFLICT (device_name) DO UPDATE SET
           items_archived = items_archived + excluded.items_archived,
           last_archived_item_ms = max(coalesce(last_archived_item_ms, excluded.last_archived_item_ms),
                                       excluded.last_archived_item_ms)`,
      ).run(g.device_name, g.items, g.last_ms);
    }
  }
}

/**
 * Sets each (device, type)'s first and last item time from the items it still holds, in the
 * caller's transaction (a range delete's). The oldest and newest hourly buckets that still count
 * items say where those items are, so it reads at most a bucket's items, never the device's
 * history (a rescan of a 1M-item device held the writer, and every producer, for 12 s). A bucket
 * whose items are gone (counters that drifted) is passed over. A type left with no item keeps
 * its row, with no times.
 */
export function settleItemTimes(
  sql: Statements,
  contentTable: string,
  t: CounterTables,
  pairs: Iterable<{ device_name: string; content_type: string }>,
): void {
  for (const { device_name, content_type } of pairs) {
    const first = edgeItemTime(sql, contentTable, t, device_name, content_type, 'first');
    const last =
      first === null ? null : edgeItemTime(sql, contentTable, t, device_name, content_type, 'last');
    sql(
      `UPDATE ${t.devices} SET first_item_ms = ?, last_item_ms = ?
       WHERE device_name = ? AND content_type = ?`,
    ).run(first, last, device_name, content_type);
  }
}

/** The oldest or newest item time of a (device, type), bucket by bucket from that end. */
function edgeItemTime(
  sql: Statements,
  contentTable: string,
  t: CounterTables,
  device: string,
  type: string,
  edge: 'first' | 'last',
): number | null {
  const [order, beyond] = edge === 'first' ? ['ASC', '>'] : ['DESC', '<'];
  const nextBucket = sql(
    `SELECT hour_ms FROM ${t.hours} WHERE device_name = ? AND content_type = ? AND hour_ms ${beyond} ?
     ORDER BY hour_ms ${order} LIMIT 1`,
  );
  // The (device_name, timestamp_ms, id) index, read from that end of the hour.
  const itemOfBucket = sql(
    `SELECT timestamp_ms FROM ${contentTable}
     WHERE device_name = ? AND timestamp_ms >= ? AND timestamp_ms < ? AND content_type = ?
     ORDER BY timestamp_ms ${order} LIMIT 1`,
  );
  let after = edge === 'first' ? -Number.MAX_VALUE : Number.MAX_VALUE;
  for (;;) {
    const bucket = nextBucket.get(device, type, after) as { hour_ms: number } | undefined;
    if (!bucket) return null;
    const item = itemOfBucket.get(device, bucket.hour_ms, bucket.hour_ms + HOUR_MS, type) as
      { timestamp_ms: number } | undefined;
    if (item) return item.timestamp_ms;
    after = bucket.hour_ms;
  }
}

/**
 * Takes restored items off their devices' archive counters (insertItems with `restored`), in
 * the insert's transaction: `restored` counts the newly stored items by device.
 */
export function unarchive(sql: Statements, t: CounterTables, restored: Map<string, number>): void {
  for (const [device, items] of restored) {
    sql(
      `UPDATE ${t.archive} SET items_archived = max(0, items_archived - ?) WHERE device_name = ?`,
    ).run(items, device);
  }
}

/**
 * Sets the device's capture counters from the items stored now (items, first/last item time,
 * hourly buckets); the received times and the archive counters stay. It reads every item of the
 * device: only for a file written before counters existed, once, when they are created.
 */
function recountDevice(
  sql: Statements,
  contentTable: string,
  t: CounterTables,
  device: string,
): void {
  sql(
    `UPDATE ${t.devices} SET items_stored = 0, first_item_ms = NULL, last_item_ms = NULL
     WHERE device_name = ?`,
  ).run(device);
  sql(`DELETE FROM ${t.hours} WHERE device_name = ?`).run(device);
  // Received times of items stored before counters existed: from their documents.
  const receivedMs = `CAST(round((julianday(json_extract(document, '$.received_at."$date"'))
                       - 2440587.5) * 86400000) AS INTEGER)`;
  sql(
    `INSERT INTO ${t.devices} (device_name, content_type, items_stored, first_item_ms, last_item_ms,
       first_received_ms, last_received_ms)
     SELECT device_name, content_type, count(*), min(timestamp_ms), max(timestamp_ms),
            min(${receivedMs}), max(${receivedMs})
     FROM ${contentTable} WHERE device_name = ?1 GROUP BY content_type
     ON CONFLICT (device_name, content_type) DO UPDATE SET
       items_stored = excluded.items_stored,
       first_item_ms = excluded.first_item_ms,
       last_item_ms = excluded.last_item_ms,
       first_received_ms = coalesce(first_received_ms, excluded.first_received_ms),
       last_received_ms = coalesce(last_received_ms, excluded.last_received_ms)`,
  ).run(device);
  sql(
    `INSERT INTO ${t.hours} (device_name, content_type, hour_ms, items)
     SELECT device_name, content_type,
            timestamp_ms - (((timestamp_ms % ${HOUR_MS}) + ${HOUR_MS}) % ${HOUR_MS}), count(*)
     FROM ${contentTable} WHERE device_name = ? GROUP BY 1, 2, 3`,
  ).run(device);
}

/**
 * After a delete of a whole device: removes its archive counters and the rows of its content
 * types that count no item. Items stored since the delete's last chunk stay counted (their
 * rows and buckets were added by their insert), with their times settled.
 */
export function forgetDevice(
  sql: Statements,
  contentTable: string,
  t: CounterTables,
  device: string,
): void {
  sql(`DELETE FROM ${t.archive} WHERE device_name = ?`).run(device);
  sql(`DELETE FROM ${t.devices} WHERE device_name = ? AND items_stored <= 0`).run(device);
  const left = sql(`SELECT device_name, content_type FROM ${t.devices} WHERE device_name = ?`).all(
    device,
  ) as Array<{ device_name: string; content_type: string }>;
  settleItemTimes(sql, contentTable, t, left);
}
