import type { Collection, Db } from 'mongodb';
import type { StoredItem } from './mongo.content-search';
import { countCollections, ensureCountIndexes } from './mongo.count-collections';
import { countFolder, type CountFolding } from './mongo.count-folding';
import { countReads } from './mongo.count-reads';
import { countRecording } from './mongo.count-recording';
import { currentCounts } from './mongo.current-counts';

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
  const collections = countCollections(db, itemsName, items);
  const current = currentCounts(collections);
  return {
    ensureIndexes: (): Promise<void> => ensureCountIndexes(collections),
    ...countRecording(collections, current),
    ...countReads(collections, current),
    ...countFolder(collections, folding),
  };
}
