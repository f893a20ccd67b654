import type { Collection, Db } from 'mongodb';
import type { StoredItem } from './mongo.content-search';
import type { ArchiveDoc, CountDelta, DeviceDoc, HourDoc } from './mongo.count-deltas';
import type { LeaseTerm } from './mongo-term-lease';

/** A fold in progress: its deltas and the documents it writes, so any folder can finish it. */
export interface FoldRound {
  _id: string;
  deltas: string[];
  writes: { devices: DeviceDoc[]; hours: HourDoc[]; archive: ArchiveDoc[] };
  deletes: { devices: string[]; hours: string[]; archive: string[] };
}

/**
 * The collections of a Mongo content store's device counters, named after its items collection,
 * and the items themselves (mongo.device-counters.ts says what each holds).
 */
export function countCollections(db: Db, itemsName: string, items: Collection<StoredItem>) {
  return {
    items,
    devices: db.collection<DeviceDoc>(`${itemsName}_devices`),
    hours: db.collection<HourDoc>(`${itemsName}_device_hours`),
    archive: db.collection<ArchiveDoc>(`${itemsName}_device_archive`),
    deltas: db.collection<CountDelta>(`${itemsName}_count_deltas`),
    rounds: db.collection<FoldRound>(`${itemsName}_count_rounds`),
    leaseTerms: db.collection<LeaseTerm>(`${itemsName}_count_lease`),
  };
}

export type CountCollections = ReturnType<typeof countCollections>;

export async function ensureCountIndexes({
  devices,
  hours,
  deltas,
}: CountCollections): Promise<void> {
  await hours.createIndex({ hour: 1 }, { name: 'hour_1' });
  await hours.createIndex({ device_name: 1, hour: 1 }, { name: 'device_name_1_hour_1' });
  await devices.createIndex({ device_name: 1 }, { name: 'device_name_1' });
  // The fleet's newest item of a type: the first entry of its range (newestItemTimes).
  await devices.createIndex(
    { content_type: 1, last_item: -1 },
    { name: 'content_type_1_last_item_-1' },
  );
  await deltas.createIndex({ at: 1 }, { name: 'at_1' });
}
