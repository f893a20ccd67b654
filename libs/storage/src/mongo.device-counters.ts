import { createHash, randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { ContentType, DeviceListing, NewestItemTimes } from '@screenfleet/contracts';
import {
  MongoBulkWriteError,
  type AnyBulkWriteOperation,
  type Collection,
  type Db,
  type Document,
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
import {
  applyDeltas,
  countChanges,
  countsOf,
  deviceKey,
  hourKey,
  type ArchiveDoc,
  type CountDelta,
  type Counts,
  type DeviceDoc,
  type HourDoc,
} from './mongo.count-deltas';
import { termLease, type LeaseTerm } from './mongo-term-lease';
import { DUPLICATE_KEY } from './store-errors';

/**
 * Writes per command at most. FerretDB 1.24 (SQLite) keeps a pooled connection for each
 * statement of an update command that matches a document until the command ends, its pool holds
 * 100, and the 100th waits for ever for one only its own command can free: the whole database
 * stops answering (shared/notes/ferretdb.md). Only the one folder writes counter documents, one
 * command at a time.
 */
const MAX_STATEMENTS = 16;

export interface CountFolding {
  /**
   * A delta is folded once older than this: until then a redelivered message finds its own
   * delta and counts nothing twice (default 60 s).
   */
  foldAfterMs?: number;
  /** How often a store tries to fold (default 1 s); 0: never (this store only writes deltas). */
  intervalMs?: number;
}

type Item = Pick<ContentDocument, 'device_name' | 'content_type' | 'timestamp'> &
  Partial<Pick<ContentDocument, 'received_at'>>;

/** A counted item and the message that carries it (the key of its delta). */
export type CountedItem = Item & { batch?: string };

/** A fold in progress: its deltas and the documents it writes, so any folder can finish it. */
interface FoldRound {
  _id: string;
  deltas: string[];
  writes: { devices: DeviceDoc[]; hours: HourDoc[]; archive: ArchiveDoc[] };
  deletes: { devices: string[]; hours: string[]; archive: string[] };
}

/**
 * The device counters of a Mongo content store: `<items>_devices` (per device and content
 * type), `<items>_device_hours` (per UTC hour) and `<items>_device_archive` (per device).
 *
 * A write never updates them. It inserts a delta beside its items (`<items>_count_deltas`,
 * mongo.count-deltas.ts): FerretDB v1 runs every update as a read then a replace, so two workers
 * counting the same device at once lost increments there, and an insert is the one write it
 * makes atomic. A content batch's delta is keyed by its message: a redelivered message (its
 * worker killed after the items were written, before the counts) finds the items it stored
 * before by their `batch` field and writes the delta they lack, or finds that delta and writes
 * nothing. Reads apply the deltas not folded yet to the documents, in order; one store at a time
 * (a term lease) folds deltas older than `foldAfterMs` into the documents, in rounds recorded
 * before they are written, so a folder that dies half way is finished by the next. A message
 * redelivered after its delta was folded is counted twice: its worker must have stayed away
 * longer than `foldAfterMs`.
 */
export function mongoDeviceCounters(
  db: Db,
  itemsName: string,
  items: Collection<StoredItem>,
  folding: CountFolding = {},
) {
  const devices = db.collection<DeviceDoc>(`${itemsName}_devices`);
  const hours = db.collection<HourDoc>(`${itemsName}_device_hours`);
  const archive = db.collection<ArchiveDoc>(`${itemsName}_device_archive`);
  const deltas = db.collection<CountDelta>(`${itemsName}_count_deltas`);
  const rounds = db.collection<FoldRound>(`${itemsName}_count_rounds`);
  const lease = termLease(db.collection<LeaseTerm>(`${itemsName}_count_lease`));
  const holder = `${hostname()}:${process.pid}:${randomUUID()}`;
  const foldAfterMs = folding.foldAfterMs ?? 60_000;
  const intervalMs = folding.intervalMs ?? 1000;

  /**
   * Inserts deltas; one already there (a redelivery's) is left as it is. The deltas of writes
   * that finish while an insert of deltas is under way go together in the next one: one commit
   * (an fsync, on FerretDB's SQLite) for many batches rather than one more per batch.
   */
  const record = groupedWrites(async (written: CountDelta[]) => {
    try {
      await deltas.insertMany(written, { ordered: false });
    } catch (error) {
      if (duplicateKeyIndexes(error) === undefined) throw error;
    }
  });

  /** The deltas not folded yet, in order, and a round in progress (its writes count as done). */
  async function pending(): Promise<{ deltas: CountDelta[]; round: FoldRound | null }> {
    const [round, all] = await Promise.all([rounds.findOne({}), deltas.find({}).toArray()]);
    const folded = new Set(round?.deltas ?? []);
    return { deltas: all.filter((delta) => !folded.has(delta._id)).sort(byOrder), round };
  }

  /** The counts of these documents with the pending deltas applied. */
  async function current(
    loaded: { devices: DeviceDoc[]; hours: HourDoc[]; archive: ArchiveDoc[] },
    only?: (device: string) => boolean,
  ): Promise<Counts> {
    const { deltas: unfolded, round } = await pending();
    const counts = countsOf(loaded.devices, loaded.hours, loaded.archive);
    if (round) overlay(counts, round, only);
    applyDeltas(
      counts,
      only === undefined ? unfolded : unfolded.map((delta) => deltaFor(delta, only)),
    );
    return counts;
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
      await deltas.createIndex({ at: 1 }, { name: 'at_1' });
    },

    /**
     * Counts items an insert stored: one delta per message (`batch`), keyed by it, so that a
     * redelivery counts nothing twice; items of no message in one delta of their own.
     * `restored`: they come back from the archive and leave its counts too.
     */
    async added(stored: CountedItem[], options: { restored?: boolean } = {}): Promise<void> {
      const loose = `a:${randomUUID()}`;
      const byDelta = new Map<string, CountedItem[]>();
      for (const item of stored) {
        const key = item.batch === undefined ? loose : `a:${item.batch}`;
        const group = byDelta.get(key);
        if (group) group.push(item);
        else byDelta.set(key, [item]);
      }
      const at = new Date();
      await record(
        [...byDelta].map(([_id, group]) => ({
          _id,
          at,
          changes: countChanges(group, 1),
          ...(options.restored ? { archived: archivedBy(group, -1) } : {}),
        })),
      );
    },

    /** Counts items deleted (by an archive pass, `archived`: also into the archive counts). */
    /**
     * Counts items about to be deleted (by an archive pass, `archived`: also into the archive
     * counts), before the delete: keyed by the items, so a delete run again after dying half
     * way finds the same items and the same delta, or finds them gone and counts nothing.
     */
    async deleting(gone: Array<Item & { _id: string }>, archived: boolean): Promise<void> {
      if (gone.length === 0) return;
      // With when each was received: the same ids stored again later and deleted once more
      // (a client re-sending deleted items) are another delete.
      const keys = gone.map((item) => `${item._id}@${item.received_at?.getTime() ?? ''}`).sort();
      await record([
        {
          _id: `d:${createHash('sha256').update(keys.join('\u0000')).digest('base64url')}`,
          at: new Date(),
          changes: countChanges(gone, -1),
          ...(archived ? { archived: archivedBy(gone, 1) } : {}),
        },
      ]);
    },

    /** The items about to be deleted (device, type, time), for `deleting`. */
    async toDelete(ids: string[]): Promise<Array<Item & { _id: string }>> {
      return items
        .find(
          { _id: { $in: ids } },
          { projection: { _id: 1, device_name: 1, content_type: 1, timestamp: 1, received_at: 1 } },
        )
        .toArray();
    },

    async read(query: DeviceCountersQuery): Promise<DeviceCounters[]> {
      const named = query.devices === undefined ? undefined : new Set(query.devices);
      const only = named === undefined ? {} : { device_name: { $in: [...named] } };
      const { lastHour, last24h } = windowStarts(query.now);
      const since = Math.min(
        hourStart(last24h),
        query.hoursSince === undefined ? Infinity : hourStart(query.hoursSince.getTime()),
      );
      const [deviceDocs, hourDocs, archiveDocs] = await Promise.all([
        devices.find(only).toArray(),
        hours.find({ ...only, hour: { $gte: new Date(since) } }).toArray(),
        archive.find(named === undefined ? {} : { _id: { $in: [...named] } }).toArray(),
      ]);
      const counts = await current(
        { devices: deviceDocs, hours: hourDocs, archive: archiveDocs },
        named && ((device) => named.has(device)),
      );
      const windows = new Map<string, { hour: number; day: number }>();
      const timeline = new Map<string, Map<number, number>>();
      const hoursFrom =
        query.hoursSince === undefined ? undefined : hourStart(query.hoursSince.getTime());
      for (const doc of counts.hours.values()) {
        const start = doc.hour.getTime();
        if (start < since) continue;
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
      for (const doc of counts.devices.values()) {
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
      for (const doc of counts.archive.values()) {
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
      const names = named === undefined ? undefined : new Set(named);
      const [deviceDocs, archiveDocs] = await Promise.all([
        devices.find(names === undefined ? {} : { device_name: { $in: [...names] } }).toArray(),
        archive.find(names === undefined ? {} : { _id: { $in: [...names] } }).toArray(),
      ]);
      const counts = await current(
        { devices: deviceDocs, hours: [], archive: archiveDocs },
        names && ((device) => names.has(device)),
      );
      return listingOf(counts);
    },

    /**
     * The newest last_item per content type. Over every device, with no delta pending that may
     * move one back (a settle or a forget): the first document of each type on the
     * (content_type, last_item desc) index, one entry read, then the pending deltas' times.
     * Otherwise, and over named devices (a bound token's few): from the listing.
     */
    async newest(
      named: readonly string[] | undefined,
      maxTimeMS: number | undefined,
    ): Promise<NewestItemTimes> {
      const newest: NewestItemTimes = { frames: null, transcription: null };
      const { deltas: unfolded, round } = await pending();
      if (named !== undefined || round || unfolded.some((d) => d.settle || d.forget)) {
        for (const row of await this.listing(named)) {
          newest.frames = later(newest.frames, row.last_frame_ms);
          newest.transcription = later(newest.transcription, row.last_transcription_ms);
        }
        return newest;
      }
      const options = {
        projection: { _id: 0, content_type: 1, last_item: 1 },
        ...(maxTimeMS === undefined ? {} : { maxTimeMS }),
      };
      const firsts = await Promise.all(
        (Object.keys(newest) as ContentType[]).map((type) =>
          devices.find({ content_type: type }, options).sort({ last_item: -1 }).limit(1).toArray(),
        ),
      );
      for (const doc of firsts.flat()) {
        const type = doc.content_type as ContentType;
        if (type in newest) newest[type] = later(newest[type], doc.last_item?.getTime() ?? null);
      }
      for (const change of unfolded.flatMap((delta) => delta.changes ?? [])) {
        const type = change.type as ContentType;
        if (type in newest && change.last_item !== undefined) {
          newest[type] = later(newest[type], change.last_item);
        }
      }
      return newest;
    },

    /**
     * Sets each (device, type)'s first and last item time from the items it still holds (after
     * a range delete), through the oldest and newest hourly buckets that still count items: it
     * reads a bucket's items at most, never the device's history (sqlite's settleItemTimes).
     */
    async settleItemTimes(
      pairs: Iterable<{ device_name: string; content_type: string }>,
    ): Promise<void> {
      const settle: NonNullable<CountDelta['settle']> = [];
      for (const { device_name, content_type } of pairs) {
        const buckets = await bucketsOf(device_name, content_type);
        const first = await edgeItemTime(device_name, content_type, buckets, 1);
        const last =
          first === null
            ? null
            : await edgeItemTime(device_name, content_type, [...buckets].reverse(), -1);
        settle.push({ device: device_name, type: content_type, first, last });
      }
      if (settle.length === 0) return;
      await record([{ _id: `s:${randomUUID()}`, at: new Date(), settle }]);
    },

    /**
     * After a delete of a whole device: its archive counts go, and the counts of its content
     * types that count no item. Items stored since the delete's last chunk stay counted.
     */
    async forget(device: string): Promise<void> {
      await record([{ _id: `f:${randomUUID()}`, at: new Date(), forget: device }]);
    },

    /**
     * Folds the deltas older than foldAfterMs (and every delta before a settle or a forget,
     * which apply in order) into the counter documents, when this store holds the fold lease:
     * a round is recorded whole, then its documents written, then its deltas deleted. A round
     * left by a folder that died is finished first. Returns the deltas folded.
     */
    async fold(now = new Date()): Promise<number> {
      if (!(await lease.acquire(holder, Math.max(10_000, intervalMs * 10), now))) return 0;
      const left = await rounds.findOne({});
      if (left) await finish(left);
      const ready = foldable(
        (await deltas.find({}).toArray()).sort(byOrder).slice(0, 500),
        now.getTime() - foldAfterMs,
      );
      if (ready.length === 0) return 0;
      const counts = await documentsFor(ready);
      const before = {
        devices: new Set(counts.devices.keys()),
        hours: new Set(counts.hours.keys()),
        archive: new Set(counts.archive.keys()),
      };
      applyDeltas(counts, ready);
      const changed = <T extends { _id: string }>(
        name: keyof Counts['touched'],
        docs: Map<string, T>,
      ) => ({
        writes: [...counts.touched[name]].flatMap((id) => (docs.has(id) ? [docs.get(id)!] : [])),
        deletes: [...counts.touched[name]].filter((id) => !docs.has(id) && before[name].has(id)),
      });
      const d = changed('devices', counts.devices);
      const h = changed('hours', counts.hours);
      const a = changed('archive', counts.archive);
      const round: FoldRound = {
        _id: randomUUID(),
        deltas: ready.map((delta) => delta._id),
        writes: { devices: d.writes, hours: h.writes, archive: a.writes },
        deletes: { devices: d.deletes, hours: h.deletes, archive: a.deletes },
      };
      await rounds.insertOne(round);
      await finish(round);
      return ready.length;
    },

    /** Folds now and then while the store is open (see CountFolding); stop() ends it. */
    startFolding(onError: (error: unknown) => void) {
      if (intervalMs <= 0) return { stop: () => Promise.resolve() };
      let stopped = false;
      let running: Promise<unknown> = Promise.resolve();
      const timer = setInterval(() => {
        running = running.then(() => (stopped ? 0 : this.fold())).catch(onError);
      }, intervalMs);
      timer.unref();
      return {
        async stop() {
          stopped = true;
          clearInterval(timer);
          await running;
          await lease.release(holder).catch(() => undefined);
        },
      };
    },
  };

  /** Writes a round's documents (whole, so writing them again is harmless), then forgets it. */
  async function finish(round: FoldRound): Promise<void> {
    await replaceAll(devices, round.writes.devices);
    await replaceAll(hours, round.writes.hours);
    await replaceAll(archive, round.writes.archive);
    if (round.deletes.devices.length)
      await devices.deleteMany({ _id: { $in: round.deletes.devices } });
    if (round.deletes.hours.length) await hours.deleteMany({ _id: { $in: round.deletes.hours } });
    if (round.deletes.archive.length)
      await archive.deleteMany({ _id: { $in: round.deletes.archive } });
    await deltas.deleteMany({ _id: { $in: round.deltas } });
    await rounds.deleteOne({ _id: round._id });
  }

  async function replaceAll<T extends Document & { _id: string }>(
    collection: Collection<T>,
    docs: T[],
  ): Promise<void> {
    for (let i = 0; i < docs.length; i += MAX_STATEMENTS) {
      const ops = docs.slice(i, i + MAX_STATEMENTS).map((doc): AnyBulkWriteOperation<T> => ({
        replaceOne: { filter: { _id: doc._id } as never, replacement: doc, upsert: true },
      }));
      await collection.bulkWrite(ops, { ordered: false });
    }
  }

  /** The counter documents the deltas touch, as stored. */
  async function documentsFor(ready: CountDelta[]): Promise<Counts> {
    const deviceIds = new Set<string>();
    const hourIds = new Set<string>();
    const archiveIds = new Set<string>();
    const forgotten = new Set<string>();
    for (const delta of ready) {
      for (const change of delta.changes ?? []) {
        deviceIds.add(deviceKey(change.device, change.type));
        for (const { hour } of change.hours) hourIds.add(hourKey(change.device, change.type, hour));
      }
      for (const { device } of delta.archived ?? []) archiveIds.add(device);
      for (const { device, type } of delta.settle ?? []) deviceIds.add(deviceKey(device, type));
      if (delta.forget !== undefined) {
        forgotten.add(delta.forget);
        archiveIds.add(delta.forget);
      }
    }
    const byDevice = { device_name: { $in: [...forgotten] } };
    const [deviceDocs, hourDocs, archiveDocs] = await Promise.all([
      devices.find({ $or: [{ _id: { $in: [...deviceIds] } }, byDevice] }).toArray(),
      hours.find({ $or: [{ _id: { $in: [...hourIds] } }, byDevice] }).toArray(),
      archive.find({ _id: { $in: [...archiveIds] } }).toArray(),
    ]);
    return countsOf(deviceDocs, hourDocs, archiveDocs);
  }

  /** The (device, type)'s hours with items, oldest first, as stored with the deltas applied. */
  async function bucketsOf(device: string, type: string): Promise<number[]> {
    const [deviceDocs, hourDocs] = await Promise.all([
      devices.find({ device_name: device }).toArray(),
      hours.find({ device_name: device, content_type: type }).toArray(),
    ]);
    const counts = await current(
      { devices: deviceDocs, hours: hourDocs, archive: [] },
      (name) => name === device,
    );
    return [...counts.hours.values()]
      .filter((bucket) => bucket.content_type === type)
      .map((bucket) => bucket.hour.getTime())
      .sort((x, y) => x - y);
  }

  /** The first item time (buckets oldest first, order 1) or the last (newest first, -1). */
  async function edgeItemTime(
    device: string,
    type: string,
    buckets: number[],
    order: 1 | -1,
  ): Promise<number | null> {
    for (const hour of buckets) {
      const item = await items
        .find(
          {
            device_name: device,
            content_type: type as ContentType,
            timestamp: { $gte: new Date(hour), $lt: new Date(hour + HOUR_MS) },
          },
          { projection: { _id: 0, timestamp: 1 } },
        )
        .sort({ timestamp: order })
        .limit(1)
        .next();
      if (item) return item.timestamp.getTime();
    }
    return null;
  }
}

/**
 * `write` for what is given, with what is given while a write is under way gathered into the next
 * one: each caller's promise settles with the write that carried its values.
 */
function groupedWrites<T>(write: (values: T[]) => Promise<void>) {
  let queued: Array<{ values: T[]; done: (error?: Error) => void }> = [];
  let writing = false;
  async function drain(): Promise<void> {
    writing = true;
    while (queued.length > 0) {
      const batch = queued;
      queued = [];
      const error = await write(batch.flatMap((entry) => entry.values)).then(
        () => undefined,
        (e: unknown) => (e instanceof Error ? e : new Error(String(e))),
      );
      for (const entry of batch) entry.done(error);
    }
    writing = false;
  }
  return (values: T[]): Promise<void> => {
    if (values.length === 0) return Promise.resolve();
    return new Promise<void>((resolve, reject) => {
      queued.push({ values, done: (error) => (error === undefined ? resolve() : reject(error)) });
      if (!writing) void drain();
    });
  };
}

/**
 * The deltas a fold takes, in order: those older than the cutoff, and all before the last settle
 * or forget among them (those apply in order after what came before them).
 */
function foldable(sorted: CountDelta[], cutoffMs: number): CountDelta[] {
  let end = sorted.findIndex((delta) => delta.at.getTime() >= cutoffMs);
  if (end < 0) end = sorted.length;
  let lastOp = -1;
  sorted.forEach((delta, i) => {
    if (delta.settle || delta.forget !== undefined) lastOp = i;
  });
  return sorted.slice(0, Math.max(end, lastOp + 1));
}

const byOrder = (a: CountDelta, b: CountDelta) =>
  a.at.getTime() - b.at.getTime() || (a._id < b._id ? -1 : a._id > b._id ? 1 : 0);

/** A round in progress counts as written: its documents replace the stored ones it names. */
function overlay(counts: Counts, round: FoldRound, only?: (device: string) => boolean): void {
  const keep = (device: string) => only === undefined || only(device);
  for (const doc of round.writes.devices)
    if (keep(doc.device_name)) counts.devices.set(doc._id, doc);
  for (const doc of round.writes.hours) if (keep(doc.device_name)) counts.hours.set(doc._id, doc);
  for (const doc of round.writes.archive) if (keep(doc._id)) counts.archive.set(doc._id, doc);
  for (const id of round.deletes.devices) counts.devices.delete(id);
  for (const id of round.deletes.hours) counts.hours.delete(id);
  for (const id of round.deletes.archive) counts.archive.delete(id);
}

/** The part of a delta about the devices kept (a read of named devices). */
function deltaFor(delta: CountDelta, only: (device: string) => boolean): CountDelta {
  return {
    _id: delta._id,
    at: delta.at,
    ...(delta.changes && { changes: delta.changes.filter((c) => only(c.device)) }),
    ...(delta.archived && { archived: delta.archived.filter((a) => only(a.device)) }),
    ...(delta.settle && { settle: delta.settle.filter((s) => only(s.device)) }),
    ...(delta.forget !== undefined && only(delta.forget) ? { forget: delta.forget } : {}),
  };
}

/** Per device: how many items (times `sign`) and the newest item's time. */
function archivedBy(gone: Item[], sign: 1 | -1): NonNullable<CountDelta['archived']> {
  const perDevice = new Map<string, { items: number; last: number }>();
  for (const item of gone) {
    const entry = perDevice.get(item.device_name) ?? { items: 0, last: -Infinity };
    entry.items += sign;
    entry.last = Math.max(entry.last, item.timestamp.getTime());
    perDevice.set(item.device_name, entry);
  }
  return [...perDevice].map(([device, { items, last }]) =>
    sign === 1 ? { device, items, last } : { device, items },
  );
}

function listingOf(counts: Counts): DeviceListing[] {
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
  for (const doc of counts.devices.values()) {
    const found = entry(doc.device_name);
    found.first_received_ms = earlier(
      found.first_received_ms,
      doc.first_received?.getTime() ?? null,
    );
    found.last_received_ms = later(found.last_received_ms, doc.last_received?.getTime() ?? null);
    const lastItem = doc.last_item?.getTime() ?? null;
    if (doc.content_type === 'frames') found.last_frame_ms = lastItem;
    if (doc.content_type === 'transcription') found.last_transcription_ms = lastItem;
  }
  for (const doc of counts.archive.values()) entry(doc._id);
  return [...byDevice.values()].sort((a, b) => compareNames(a.device_name, b.device_name));
}

const earlier = (a: number | null, b: number | null) =>
  b === null ? a : a === null ? b : Math.min(a, b);
const later = (a: number | null, b: number | null) =>
  b === null ? a : a === null ? b : Math.max(a, b);

/** The indexes of the operations a bulk write refused only as duplicate keys, else undefined. */
function duplicateKeyIndexes(error: unknown): number[] | undefined {
  if (!(error instanceof MongoBulkWriteError)) return undefined;
  const errors: WriteError[] = ([] as WriteError[]).concat(error.writeErrors);
  if (errors.length === 0 || errors.some((e) => e.code !== DUPLICATE_KEY)) return undefined;
  if (error.result?.getWriteConcernError()) return undefined;
  return errors.map((e) => e.index);
}
