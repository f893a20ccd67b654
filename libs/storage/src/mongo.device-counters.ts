import type { ContentType, DeviceListing, NewestItemTimes } from '@screenfleet/contracts';
import {
  MongoBulkWriteError,
  type AnyBulkWriteOperation,
  type Collection,
  type Db,
  type Document,
  type Filter,
  type WriteError,
} from 'mongodb';
import type { ContentDocument } from './content-store';
import {
  compareNames,
  HOUR_MS,
  hourStart,
  windowShare,
  windowStarts,
  type DeviceCounters,
  type DeviceCountersQuery,
} from './device-counters';
import type { StoredItem } from './mongo.content-search';
import { DUPLICATE_KEY } from './store-errors';

interface DeviceDoc {
  _id: string;
  device_name: string;
  content_type: string;
  items_stored: number;
  first_item?: Date;
  last_item?: Date;
  first_received?: Date;
  last_received?: Date;
}

interface HourDoc {
  _id: string;
  device_name: string;
  content_type: string;
  hour: Date;
  items: number;
}

interface ArchiveDoc {
  _id: string;
  items_archived: number;
  last_archived?: Date;
}

type Item = Pick<ContentDocument, 'device_name' | 'content_type' | 'timestamp'> &
  Partial<Pick<ContentDocument, 'received_at'>>;

/** Per (device, type): how many items, their time bounds, and per hour. */
interface Tally {
  device: string;
  type: string;
  items: number;
  firstItem: Date;
  lastItem: Date;
  firstReceived?: Date;
  lastReceived?: Date;
  hours: Map<number, number>;
}

function tally(items: Iterable<Item>): Map<string, Tally> {
  const tallies = new Map<string, Tally>();
  for (const item of items) {
    const key = deviceKey(item.device_name, item.content_type);
    let entry = tallies.get(key);
    if (!entry) {
      entry = {
        device: item.device_name,
        type: item.content_type,
        items: 0,
        firstItem: item.timestamp,
        lastItem: item.timestamp,
        hours: new Map(),
      };
      tallies.set(key, entry);
    }
    entry.items += 1;
    if (item.timestamp < entry.firstItem) entry.firstItem = item.timestamp;
    if (item.timestamp > entry.lastItem) entry.lastItem = item.timestamp;
    if (item.received_at) {
      if (!entry.firstReceived || item.received_at < entry.firstReceived) {
        entry.firstReceived = item.received_at;
      }
      if (!entry.lastReceived || item.received_at > entry.lastReceived) {
        entry.lastReceived = item.received_at;
      }
    }
    const hour = hourStart(item.timestamp.getTime());
    entry.hours.set(hour, (entry.hours.get(hour) ?? 0) + 1);
  }
  return tallies;
}

/**
 * Upserts per command at most. FerretDB 1.24 (SQLite) keeps a pooled connection for each
 * statement of an update command that matches a document until the command ends, its pool holds
 * 100, and the 100th waits for ever for one only its own command can free: the whole database
 * stops answering (shared/notes/ferretdb.md). The limit counts concurrent commands, so a store
 * sends one counters command at a time: up to six processes writing counters at once stay under
 * it. MongoDB has no such limit; this costs it nothing but round trips on huge deletes.
 */
const MAX_STATEMENTS = 16;
/** An upsert that raced another for a new document: tried this many times in all. */
const MAX_ATTEMPTS = 3;

/** The indexes of the operations a bulk write refused only as duplicate keys, else undefined. */
function duplicateKeyIndexes(error: unknown): number[] | undefined {
  if (!(error instanceof MongoBulkWriteError)) return undefined;
  const errors: WriteError[] = ([] as WriteError[]).concat(error.writeErrors);
  if (errors.length === 0 || errors.some((e) => e.code !== DUPLICATE_KEY)) return undefined;
  if (error.result?.getWriteConcernError()) return undefined;
  return errors.map((e) => e.index);
}

/** Runs the tasks given to it one after another, in the order given. */
function serialized() {
  let tail: Promise<unknown> = Promise.resolve();
  return <T>(task: () => Promise<T>): Promise<T> => {
    const run = tail.then(task, task);
    tail = run.catch(() => undefined);
    return run;
  };
}

const deviceKey = (device: string, type: string) => `${device}\u0000${type}`;
const hourKey = (device: string, type: string, hour: number) =>
  `${device}\u0000${type}\u0000${hour}`;

/**
 * The device counters of a Mongo content store, in three small collections beside the items:
 * `<items>_devices` (one document per device and content type), `<items>_device_hours` (per
 * UTC hour) and `<items>_device_archive` (per device). Updated with `$inc`/`$min`/`$max` right
 * after the items are stored or deleted, counting only the items the insert newly stored (a
 * redelivered item is a duplicate key, never counted twice). FerretDB and our MongoDB use have
 * no transactions: a crash between the items' write and the counters' leaves them short by
 * that batch (never counted twice).
 */
export function mongoDeviceCounters(db: Db, itemsName: string, items: Collection<StoredItem>) {
  const oneAtATime = serialized();
  const devices = db.collection<DeviceDoc>(`${itemsName}_devices`);
  const hours = db.collection<HourDoc>(`${itemsName}_device_hours`);
  const archive = db.collection<ArchiveDoc>(`${itemsName}_device_archive`);

  async function apply(tallies: Map<string, Tally>, sign: 1 | -1): Promise<void> {
    if (tallies.size === 0) return;
    const deviceOps: AnyBulkWriteOperation<DeviceDoc>[] = [];
    const hourOps: AnyBulkWriteOperation<HourDoc>[] = [];
    for (const [key, t] of tallies) {
      const times =
        sign === 1
          ? {
              $min: {
                first_item: t.firstItem,
                ...(t.firstReceived ? { first_received: t.firstReceived } : {}),
              },
              $max: {
                last_item: t.lastItem,
                ...(t.lastReceived ? { last_received: t.lastReceived } : {}),
              },
            }
          : {};
      deviceOps.push({
        updateOne: {
          filter: { _id: key },
          update: {
            $inc: { items_stored: sign * t.items },
            $setOnInsert: { device_name: t.device, content_type: t.type },
            ...times,
          },
          upsert: true,
        },
      });
      for (const [hour, n] of t.hours) {
        hourOps.push({
          updateOne: {
            filter: { _id: hourKey(t.device, t.type, hour) },
            update: {
              $inc: { items: sign * n },
              $setOnInsert: { device_name: t.device, content_type: t.type, hour: new Date(hour) },
            },
            upsert: true,
          },
        });
      }
    }
    await upsertAll(devices, deviceOps);
    await upsertAll(hours, hourOps);
    if (sign === -1) {
      const touched = hourOps.map((op) => ('updateOne' in op ? op.updateOne.filter._id : ''));
      await hours.deleteMany({ _id: { $in: touched }, items: { $lte: 0 } } as Filter<HourDoc>);
    }
  }

  /**
   * The updates in commands of at most MAX_STATEMENTS, one command at a time per store (see
   * MAX_STATEMENTS); an upsert that lost a race to create its document (E11000: FerretDB runs an
   * upsert as a read then an insert) is sent again, and then finds the document.
   */
  async function upsertAll<T extends Document>(
    collection: Collection<T>,
    ops: AnyBulkWriteOperation<T>[],
  ): Promise<void> {
    for (let i = 0; i < ops.length; i += MAX_STATEMENTS) {
      let pending = ops.slice(i, i + MAX_STATEMENTS);
      for (let attempt = 1; pending.length > 0; attempt++) {
        pending = await oneAtATime(async () => {
          try {
            await collection.bulkWrite(pending, { ordered: false });
            return [];
          } catch (error) {
            const raced = duplicateKeyIndexes(error);
            if (raced === undefined || attempt >= MAX_ATTEMPTS) throw error;
            return raced.map((index) => pending[index]!);
          }
        });
      }
    }
  }

  /** The oldest (1) or newest (-1) item time of a (device, type), bucket by bucket from that end. */
  async function edgeItemTime(
    device: string,
    type: ContentType,
    order: 1 | -1,
  ): Promise<Date | null> {
    let after: Date | undefined;
    for (;;) {
      const beyond =
        after === undefined ? {} : { hour: order === 1 ? { $gt: after } : { $lt: after } };
      const bucket = await hours
        .find({ device_name: device, content_type: type, ...beyond }, { projection: { hour: 1 } })
        .sort({ hour: order })
        .limit(1)
        .next();
      if (!bucket) return null;
      const end = new Date(bucket.hour.getTime() + HOUR_MS);
      const item = await items
        .find(
          { device_name: device, content_type: type, timestamp: { $gte: bucket.hour, $lt: end } },
          { projection: { _id: 0, timestamp: 1 } },
        )
        .sort({ timestamp: order })
        .limit(1)
        .next();
      if (item) return item.timestamp;
      after = bucket.hour;
    }
  }

  /**
   * Sets each (device, type)'s first and last item time from the items it still holds (after
   * a range delete), through the oldest and newest hourly buckets that still count items: it
   * reads a bucket's items at most, never the device's history (sqlite's settleItemTimes).
   */
  async function settleItemTimes(
    pairs: Iterable<{ device_name: string; content_type: string }>,
  ): Promise<void> {
    for (const { device_name, content_type } of pairs) {
      const first = await edgeItemTime(device_name, content_type as ContentType, 1);
      const last =
        first === null ? null : await edgeItemTime(device_name, content_type as ContentType, -1);
      await devices.updateOne(
        { _id: deviceKey(device_name, content_type) },
        first === null || last === null
          ? { $unset: { first_item: '', last_item: '' } }
          : { $set: { first_item: first, last_item: last } },
      );
    }
  }

  return {
    async ensureIndexes(): Promise<void> {
      await hours.createIndex({ hour: 1 }, { name: 'hour_1' });
      await hours.createIndex({ device_name: 1, hour: 1 }, { name: 'device_name_1_hour_1' });
      await devices.createIndex({ device_name: 1 }, { name: 'device_name_1' });
      // The fleet's newest item of a type: the first entry of its range (newestItemTimes).
      await devices.createIndex(
        { content_type: 1, last_item: -1 },
        { name: 'content_type_1_last_item_-1' },
      );
    },

    /** Counts items the insert newly stored (their received_at included). */
    added: (docs: ContentDocument[]) => apply(tally(docs), 1),

    /**
     * Reads the items about to be deleted (device, type, time) so that `subtract` can take them
     * off once they are gone.
     */
    async beforeDelete(ids: string[]): Promise<Item[]> {
      return items
        .find(
          { _id: { $in: ids } },
          { projection: { _id: 0, device_name: 1, content_type: 1, timestamp: 1 } },
        )
        .toArray();
    },

    async deleted(gone: Item[], archived: boolean): Promise<void> {
      const tallies = tally(gone);
      await apply(tallies, -1);
      if (!archived || tallies.size === 0) return;
      const perDevice = new Map<string, { n: number; last: Date }>();
      for (const t of tallies.values()) {
        const entry = perDevice.get(t.device);
        if (!entry) perDevice.set(t.device, { n: t.items, last: t.lastItem });
        else {
          entry.n += t.items;
          if (t.lastItem > entry.last) entry.last = t.lastItem;
        }
      }
      await upsertAll(
        archive,
        [...perDevice].map(([device, { n, last }]) => ({
          updateOne: {
            filter: { _id: device },
            update: { $inc: { items_archived: n }, $max: { last_archived: last } },
            upsert: true,
          },
        })),
      );
    },

    async read(query: DeviceCountersQuery): Promise<DeviceCounters[]> {
      const only = query.devices === undefined ? {} : { device_name: { $in: [...query.devices] } };
      const { lastHour, last24h } = windowStarts(query.now);
      const since = Math.min(
        hourStart(last24h),
        query.hoursSince === undefined ? Infinity : hourStart(query.hoursSince.getTime()),
      );
      const [deviceDocs, hourDocs, archiveDocs] = await Promise.all([
        devices.find(only).toArray(),
        hours.find({ ...only, hour: { $gte: new Date(since) } }).toArray(),
        archive
          .find(query.devices === undefined ? {} : { _id: { $in: [...query.devices] } })
          .toArray(),
      ]);
      const windows = new Map<string, { hour: number; day: number }>();
      const timeline = new Map<string, Map<number, number>>();
      const hoursFrom =
        query.hoursSince === undefined ? undefined : hourStart(query.hoursSince.getTime());
      for (const doc of hourDocs) {
        const start = doc.hour.getTime();
        const key = deviceKey(doc.device_name, doc.content_type);
        const w = windows.get(key) ?? { hour: 0, day: 0 };
        w.hour += doc.items * windowShare(start, lastHour);
        w.day += doc.items * windowShare(start, last24h);
        windows.set(key, w);
        if (hoursFrom !== undefined && start >= hoursFrom) {
          const perHour = timeline.get(doc.device_name) ?? new Map<number, number>();
          perHour.set(start, (perHour.get(start) ?? 0) + doc.items);
          timeline.set(doc.device_name, perHour);
        }
      }
      const byDevice = new Map<string, DeviceCounters>();
      const entry = (name: string): DeviceCounters => {
        let found = byDevice.get(name);
        if (!found) {
          found = {
            deviceName: name,
            byContentType: [],
            itemsArchived: 0,
            lastArchivedItemTime: null,
          };
          if (hoursFrom !== undefined) {
            found.hours = [...(timeline.get(name) ?? new Map<number, number>())]
              .filter(([, n]) => n > 0)
              .sort(([a], [b]) => a - b)
              .map(([start, n]) => ({ start: new Date(start), items: n }));
          }
          byDevice.set(name, found);
        }
        return found;
      };
      for (const doc of deviceDocs) {
        const w = windows.get(doc._id) ?? { hour: 0, day: 0 };
        entry(doc.device_name).byContentType.push({
          contentType: doc.content_type as ContentType,
          itemsStored: doc.items_stored,
          firstItemTime: doc.first_item ?? null,
          lastItemTime: doc.last_item ?? null,
          firstReceivedAt: doc.first_received ?? null,
          lastReceivedAt: doc.last_received ?? null,
          itemsLastHour: Math.round(w.hour),
          itemsLast24h: Math.round(w.day),
        });
      }
      for (const doc of archiveDocs) {
        const found = entry(doc._id);
        found.itemsArchived = doc.items_archived;
        found.lastArchivedItemTime = doc.last_archived ?? null;
      }
      const all = [...byDevice.values()];
      for (const d of all) d.byContentType.sort((a, b) => (a.contentType < b.contentType ? -1 : 1));
      return all.sort((a, b) => compareNames(a.deviceName, b.deviceName));
    },

    /** The listing rows, folded from the devices' documents (no hour buckets read). */
    async listing(named: readonly string[] | undefined): Promise<DeviceListing[]> {
      const [deviceDocs, archiveDocs] = await Promise.all([
        devices
          .find(named === undefined ? {} : { device_name: { $in: [...named] } }, {
            projection: { items_stored: 0, first_item: 0 },
          })
          .toArray(),
        archive
          .find(named === undefined ? {} : { _id: { $in: [...named] } }, { projection: { _id: 1 } })
          .toArray(),
      ]);
      const byDevice = new Map<string, DeviceListing>();
      const entry = (name: string): DeviceListing => {
        let found = byDevice.get(name);
        if (!found) {
          found = {
            device_name: name,
            first_received_ms: null,
            last_received_ms: null,
            last_frame_ms: null,
            last_transcription_ms: null,
          };
          byDevice.set(name, found);
        }
        return found;
      };
      const earliest = (a: number | null, b: Date | undefined) =>
        b === undefined ? a : a === null ? b.getTime() : Math.min(a, b.getTime());
      const latest = (a: number | null, b: Date | undefined) =>
        b === undefined ? a : a === null ? b.getTime() : Math.max(a, b.getTime());
      for (const doc of deviceDocs) {
        const found = entry(doc.device_name);
        found.first_received_ms = earliest(found.first_received_ms, doc.first_received);
        found.last_received_ms = latest(found.last_received_ms, doc.last_received);
        const lastItem = doc.last_item?.getTime() ?? null;
        if (doc.content_type === 'frames') found.last_frame_ms = lastItem;
        if (doc.content_type === 'transcription') found.last_transcription_ms = lastItem;
      }
      for (const doc of archiveDocs) entry(doc._id);
      return [...byDevice.values()].sort((a, b) => compareNames(a.device_name, b.device_name));
    },

    /**
     * The newest last_item per content type. Over every device: the first document of each type
     * on the (content_type, last_item desc) index, one entry read (a missing last_item sorts
     * last). Over named devices (a bound token's few): their documents by device_name, folded
     * here, so no planner can pick the type's index and walk the fleet for them.
     */
    async newest(
      named: readonly string[] | undefined,
      maxTimeMS: number | undefined,
    ): Promise<NewestItemTimes> {
      const newest: NewestItemTimes = { frames: null, transcription: null };
      const fold = (doc: Pick<DeviceDoc, 'content_type' | 'last_item'>) => {
        const type = doc.content_type as ContentType;
        const time = doc.last_item?.getTime();
        if (time !== undefined && type in newest && time > (newest[type] ?? -Infinity)) {
          newest[type] = time;
        }
      };
      const options = {
        projection: { _id: 0, content_type: 1, last_item: 1 },
        ...(maxTimeMS === undefined ? {} : { maxTimeMS }),
      };
      if (named !== undefined) {
        const docs = await devices.find({ device_name: { $in: [...named] } }, options).toArray();
        for (const doc of docs) fold(doc);
        return newest;
      }
      const firsts = await Promise.all(
        (Object.keys(newest) as ContentType[]).map((type) =>
          devices.find({ content_type: type }, options).sort({ last_item: -1 }).limit(1).toArray(),
        ),
      );
      for (const doc of firsts.flat()) fold(doc);
      return newest;
    },

    settleItemTimes,

    /** Takes restored items (newly stored, by device) off their devices' archive counters. */
    async unarchived(restored: ContentDocument[]): Promise<void> {
      const perDevice = new Map<string, number>();
      for (const doc of restored) {
        perDevice.set(doc.device_name, (perDevice.get(doc.device_name) ?? 0) + 1);
      }
      if (perDevice.size === 0) return;
      await upsertAll(
        archive,
        [...perDevice].map(([device, n]) => ({
          updateOne: { filter: { _id: device }, update: { $inc: { items_archived: -n } } },
        })),
      );
      // $inc cannot floor: an archive counter older than its items' restore stays at 0.
      await archive.updateMany(
        { _id: { $in: [...perDevice.keys()] }, items_archived: { $lt: 0 } },
        { $set: { items_archived: 0 } },
      );
    },

    /**
     * After a delete of a whole device: removes its archive counters and the documents of its
     * content types that count no item. Items stored since the delete's last chunk stay counted
     * (each document's condition is checked as it is removed), with their times settled.
     */
    async forget(device: string): Promise<void> {
      await archive.deleteOne({ _id: device });
      await devices.deleteMany({ device_name: device, items_stored: { $lte: 0 } });
      const left = await devices
        .find({ device_name: device }, { projection: { device_name: 1, content_type: 1 } })
        .toArray();
      await settleItemTimes(left);
    },
  };
}
