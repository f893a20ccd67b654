import type { ContentDocument } from './content-store';
import { hourStart } from './device-counters';

/** Per (device, content type): items stored now, item and batch times (mongo.device-counters.ts). */
export interface DeviceDoc {
  _id: string;
  device_name: string;
  content_type: string;
  items_stored: number;
  first_item?: Date;
  last_item?: Date;
  first_received?: Date;
  last_received?: Date;
}

/** Per (device, content type, UTC hour) with items stored. */
export interface HourDoc {
  _id: string;
  device_name: string;
  content_type: string;
  hour: Date;
  items: number;
}

/** Per device: what archive passes moved out and is still out. */
export interface ArchiveDoc {
  _id: string;
  items_archived: number;
  last_archived?: Date;
}

/** What one (device, content type) gained or lost; times in ms since the epoch. */
export interface CountChange {
  device: string;
  type: string;
  /** Stored (positive) or deleted (negative). */
  items: number;
  first_item?: number;
  last_item?: number;
  first_received?: number;
  last_received?: number;
  /** Per UTC hour (its start): items. Objects, not pairs: FerretDB v1 stores no nested array. */
  hours: Array<{ hour: number; items: number }>;
}

/**
 * One write's effect on the counters, inserted beside it (a delta is never updated: an insert
 * is the one write FerretDB v1 makes atomic and cannot lose under concurrency), applied in `at`
 * order by reads and, later, folded into the counter documents (mongo.count-folding.ts).
 */
export interface CountDelta {
  _id: string;
  at: Date;
  changes?: CountChange[];
  /** Per device: items moved to the archive (positive) or restored from it (negative). */
  archived?: Array<{ device: string; items: number; last?: number }>;
  /** First and last item times set from the items left (a range delete); null: none left. */
  settle?: Array<{ device: string; type: string; first: number | null; last: number | null }>;
  /** A deleted device: its archive counts and the counts that count no item go. */
  forget?: string;
}

/** The counter documents a read answers from or a fold writes, by _id, and which it changed. */
export interface Counts {
  devices: Map<string, DeviceDoc>;
  hours: Map<string, HourDoc>;
  archive: Map<string, ArchiveDoc>;
  touched: { devices: Set<string>; hours: Set<string>; archive: Set<string> };
}

export const deviceKey = (device: string, type: string) => `${device}\u0000${type}`;
export const hourKey = (device: string, type: string, hour: number) =>
  `${device}\u0000${type}\u0000${hour}`;

export function countsOf(
  devices: DeviceDoc[] = [],
  hours: HourDoc[] = [],
  archive: ArchiveDoc[] = [],
): Counts {
  return {
    devices: new Map(devices.map((doc) => [doc._id, doc])),
    hours: new Map(hours.map((doc) => [doc._id, doc])),
    archive: new Map(archive.map((doc) => [doc._id, doc])),
    touched: { devices: new Set(), hours: new Set(), archive: new Set() },
  };
}

type Item = Pick<ContentDocument, 'device_name' | 'content_type' | 'timestamp'> &
  Partial<Pick<ContentDocument, 'received_at'>>;

/** What these items change, +1 each when stored, -1 each when deleted. */
export function countChanges(items: Iterable<Item>, sign: 1 | -1): CountChange[] {
  const changes = new Map<string, CountChange & { perHour: Map<number, number> }>();
  for (const item of items) {
    const key = deviceKey(item.device_name, item.content_type);
    let change = changes.get(key);
    if (!change) {
      change = {
        device: item.device_name,
        type: item.content_type,
        items: 0,
        hours: [],
        perHour: new Map(),
      };
      changes.set(key, change);
    }
    change.items += sign;
    const hour = hourStart(item.timestamp.getTime());
    change.perHour.set(hour, (change.perHour.get(hour) ?? 0) + sign);
    if (sign === 1) {
      change.first_item = earliest(change.first_item, item.timestamp.getTime());
      change.last_item = latest(change.last_item, item.timestamp.getTime());
      if (item.received_at) {
        change.first_received = earliest(change.first_received, item.received_at.getTime());
        change.last_received = latest(change.last_received, item.received_at.getTime());
      }
    }
  }
  return [...changes.values()].map(({ perHour, ...change }) => ({
    ...change,
    hours: [...perHour].map(([hour, items]) => ({ hour, items })),
  }));
}

/**
 * Applies the deltas, in the order given, to the counts (item counts floored at 0, as the sqlite
 * adapter does; an hour with no item left goes): the one rule by which reads answer and folds
 * write.
 */
export function applyDeltas(counts: Counts, deltas: readonly CountDelta[]): void {
  for (const delta of deltas) {
    for (const change of delta.changes ?? []) applyChange(counts, change);
    for (const { device, items, last } of delta.archived ?? []) {
      const doc = counts.archive.get(device) ?? { _id: device, items_archived: 0 };
      doc.items_archived = Math.max(0, doc.items_archived + items);
      if (last !== undefined) doc.last_archived = laterDate(doc.last_archived, last);
      counts.archive.set(device, doc);
      counts.touched.archive.add(device);
    }
    for (const { device, type, first, last } of delta.settle ?? []) {
      const key = deviceKey(device, type);
      const doc = counts.devices.get(key);
      if (!doc) continue;
      if (first === null) delete doc.first_item;
      else doc.first_item = new Date(first);
      if (last === null) delete doc.last_item;
      else doc.last_item = new Date(last);
      counts.touched.devices.add(key);
    }
    if (delta.forget !== undefined) forget(counts, delta.forget);
  }
}

function applyChange(counts: Counts, change: CountChange): void {
  const key = deviceKey(change.device, change.type);
  const doc = counts.devices.get(key) ?? {
    _id: key,
    device_name: change.device,
    content_type: change.type,
    items_stored: 0,
  };
  doc.items_stored = Math.max(0, doc.items_stored + change.items);
  if (change.first_item !== undefined)
    doc.first_item = earlierDate(doc.first_item, change.first_item);
  if (change.last_item !== undefined) doc.last_item = laterDate(doc.last_item, change.last_item);
  if (change.first_received !== undefined) {
    doc.first_received = earlierDate(doc.first_received, change.first_received);
  }
  if (change.last_received !== undefined) {
    doc.last_received = laterDate(doc.last_received, change.last_received);
  }
  counts.devices.set(key, doc);
  counts.touched.devices.add(key);
  for (const { hour, items } of change.hours) {
    const id = hourKey(change.device, change.type, hour);
    const bucket = counts.hours.get(id) ?? {
      _id: id,
      device_name: change.device,
      content_type: change.type,
      hour: new Date(hour),
      items: 0,
    };
    bucket.items += items;
    if (bucket.items > 0) counts.hours.set(id, bucket);
    else counts.hours.delete(id);
    counts.touched.hours.add(id);
  }
}

function forget(counts: Counts, device: string): void {
  counts.archive.delete(device);
  counts.touched.archive.add(device);
  for (const [key, doc] of counts.devices) {
    if (doc.device_name !== device || doc.items_stored > 0) continue;
    counts.devices.delete(key);
    counts.touched.devices.add(key);
    for (const [id, bucket] of counts.hours) {
      if (bucket.device_name !== device || bucket.content_type !== doc.content_type) continue;
      counts.hours.delete(id);
      counts.touched.hours.add(id);
    }
  }
}

const earliest = (a: number | undefined, b: number) => (a === undefined ? b : Math.min(a, b));
const latest = (a: number | undefined, b: number) => (a === undefined ? b : Math.max(a, b));
const earlierDate = (a: Date | undefined, b: number) =>
  new Date(a === undefined ? b : Math.min(a.getTime(), b));
const laterDate = (a: Date | undefined, b: number) =>
  new Date(a === undefined ? b : Math.max(a.getTime(), b));
