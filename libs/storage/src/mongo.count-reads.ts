import type { ContentType, DeviceListing, NewestItemTimes } from '@screenfleet/contracts';
import {
  compareNames,
  hourStart,
  windowShare,
  windowStarts,
  type DeviceCounters,
  type DeviceCountersQuery,
} from './device-counters';
import { deviceKey, type Counts } from './mongo.count-deltas';
import type { CountCollections } from './mongo.count-collections';
import type { CurrentCounts } from './mongo.current-counts';

/** The counters as the store's readers want them: per device, the listing, the newest items. */
export function countReads(
  { devices, hours, archive }: CountCollections,
  { pending, current }: CurrentCounts,
) {
  return {
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
  };
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
