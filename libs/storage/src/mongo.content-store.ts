import { TimeoutError } from '@screenfleet/contracts';
import {
  BSON,
  MongoBulkWriteError,
  MongoServerError,
  type Collection,
  type Filter,
  type FindCursor,
} from 'mongodb';
import type {
  ContentDocument,
  ContentStore,
  DeleteRange,
  InsertResult,
  NewContentDocument,
  SearchOptions,
  SearchQuery,
  SearchResult,
  TimeRange,
} from './content-store';
import { mongoClient, type MongoClientOptions, type StoreLogger } from './mongo-connection';
import {
  searchFields,
  searchFilter,
  searchSort,
  withoutSearchFields,
  type StoredItem,
} from './mongo.content-search';
import { summariseDeleted } from './deleted-items';
import type { CountFolding } from './mongo.count-folding';
import { mongoDeviceCounters } from './mongo.device-counters';
import { DUPLICATE_KEY, duplicateKeyIndexes, toStoreError } from './store-errors';

export interface MongoContentStoreOptions extends MongoClientOptions {
  url: string;
  database: string;
  collection?: string;
  logger?: StoreLogger;
  /** When the device counts' deltas are folded (mongo.count-folding.ts). */
  countFolding?: CountFolding;
}

// What the workers filter on: a device's items by time, all items by time, items by tag. On
// FerretDB v1 none is made, nor any below: its SQLite backend pushes down an `_id` equality alone
// and runs every other query as a scan of the collection whatever the indexes, so an index there
// only slows each insert (three of them cost it ~15 % of an insert's CPU; measured, 1.24).
const indexes = [
  { key: { device_name: 1, timestamp: 1 }, name: 'device_name_1_timestamp_1' },
  { key: { timestamp: 1 }, name: 'timestamp_1' },
  { key: { tags: 1 }, name: 'tags_1' },
] as const;

// What search needs from MongoDB's planner: a query word (multikey) with its items newest
// first, and all items newest first (read backwards; scanRange's (timestamp, _id) order reads
// it forwards). On FerretDB these two cost 15-30% of its insert rate.
const searchIndexes = [
  { key: { search_terms: 1, timestamp: -1 }, name: 'search_terms_1_timestamp_-1' },
  { key: { timestamp: 1, _id: 1 }, name: 'timestamp_1__id_1' },
] as const;

/**
 * ContentStore over the native driver. The client connects on first use and reconnects by
 * itself after an outage; nothing here needs to be recreated.
 */
export function createMongoContentStore(options: MongoContentStoreOptions): ContentStore {
  const client = mongoClient(options.url, options, options.logger, 'content store');
  const db = client.db(options.database);
  const items = db.collection<StoredItem>(options.collection ?? 'content_items');
  // The ids and claims of items that claim more than their _id (see NewContentDocument).
  const claims = db.collection<Claim>(`${items.collectionName}_claims`);
  const counters = mongoDeviceCounters(db, items.collectionName, items, options.countFolding);
  // Every store folds the counts' deltas in turn (one at a time, by lease): no process of its own.
  const folding = counters.startFolding((error) =>
    options.logger?.warn({ err: error }, 'content store: folding the device counts failed'),
  );

  return {
    ensureIndexes: () =>
      translated('ensureIndexes', async () => {
        // One createIndex per index: FerretDB v1 drops the connection when a createIndexes
        // listing several indexes finds them all existing, while a single one is a no-op.
        if ('ferretdbVersion' in (await db.command({ buildInfo: 1 }))) return;
        for (const index of [...indexes, ...searchIndexes]) {
          await items.createIndex(index.key, { name: index.name });
        }
        await claims.createIndex({ owner: 1 }, { name: 'owner_1' });
        await counters.ensureIndexes();
      }),

    insertItems: (docs, options = {}) =>
      translated('insertItems', async () => {
        const claiming = docs.filter((doc) => doc.claims?.length);
        const result = await insertIgnoringStored(
          items,
          docs.filter((doc) => !doc.claims?.length),
        );
        // Rare (transcriptions without a timestamp), so one at a time.
        for (const doc of claiming) {
          const stored = (await claimAll(claims, doc))
            ? await insertIgnoringStored(items, [doc])
            : { inserted: 0, alreadyStored: 1, stored: [], duplicates: [] };
          result.inserted += stored.inserted;
          result.alreadyStored += stored.alreadyStored;
          result.stored.push(...stored.stored);
          result.duplicates.push(...stored.duplicates);
        }
        const earlier = await storedByTheirMessage(items, result.duplicates);
        await counters.added([...result.stored, ...earlier], options);
        return { inserted: result.inserted, alreadyStored: result.alreadyStored };
      }),

    scanRange: (range, { chunkSize }) => scanChunks(items, range, chunkSize),

    countRange: (range) => translated('countRange', () => items.countDocuments(rangeFilter(range))),

    deleteByIds: (ids, options = {}) =>
      translated('deleteByIds', async () => {
        if (ids.length === 0) return 0;
        await counters.deleting(await counters.toDelete(ids), options.archived === true);
        const result = await items.deleteMany({ _id: { $in: ids } });
        await claims.deleteMany({ owner: { $in: ids } });
        return result.deletedCount;
      }),

    deleteRange: (range, { limit }) =>
      translated('deleteRange', async () => {
        if (!Number.isInteger(limit) || limit < 1) {
          throw new RangeError(`limit must be a positive integer, got ${limit}`);
        }
        const found = await items
          .find(deleteFilter(range), {
            projection: {
              _id: 1,
              device_name: 1,
              content_type: 1,
              file_path: 1,
              timestamp: 1,
              received_at: 1,
            },
          })
          .sort({ timestamp: 1, _id: 1 })
          .limit(limit)
          .toArray();
        if (found.length === 0) return { counts: [], filePaths: [] };
        const ids = found.map((doc) => doc._id);
        // No transactions here (FerretDB): the counts' delta goes first, keyed by these items
        // (as deleteByIds does). The archive worker's task lease keeps any other delete of these
        // items away meanwhile.
        await counters.deleting(found, false);
        await items.deleteMany({ _id: { $in: ids } });
        await claims.deleteMany({ owner: { $in: ids } });
        const deleted = summariseDeleted(found);
        await counters.settleItemTimes(deleted.counts);
        return deleted;
      }),
    deviceCounters: (query) => translated('deviceCounters', () => counters.read(query)),
    deviceListing: (devices) => translated('deviceListing', () => counters.listing(devices)),
    newestItemTimes: (devices, { timeoutMs } = {}) =>
      translated('newestItemTimes', async () => {
        const maxTimeMS = timeoutMs === undefined ? undefined : Math.max(1, Math.floor(timeoutMs));
        try {
          return await counters.newest(devices, maxTimeMS);
        } catch (error) {
          if (!(error instanceof MongoServerError && error.code === MAX_TIME_EXPIRED)) throw error;
          throw new TimeoutError(
            `the newest item times ran past their deadline (${timeoutMs} ms) and were stopped (maxTimeMS)`,
          );
        }
      }),
    forgetDevice: (device) => translated('forgetDevice', () => counters.forget(device)),

    filePathsInUse: (paths) =>
      translated('filePathsInUse', async () => {
        if (paths.length === 0) return new Set<string>();
        const rows = await items
          .aggregate<{ _id: string }>([
            { $match: { file_path: { $in: paths } } },
            { $group: { _id: '$file_path' } },
          ])
          .toArray();
        return new Set(rows.map((row) => row._id));
      }),

    search: (query, options = {}) => translated('search', () => searchItems(items, query, options)),

    close: async () => {
      await folding.stop();
      await client.close();
    },
  };
}

async function searchItems(
  items: Collection<StoredItem>,
  query: SearchQuery,
  { timeoutMs, maxBytes }: SearchOptions,
): Promise<SearchResult> {
  const filter = searchFilter(query);
  // The server stops each part at the time left (maxTimeMS), not after the request is gone.
  const maxTimeMS = timeoutMs === undefined ? undefined : Math.max(1, Math.floor(timeoutMs));
  const limited = maxTimeMS === undefined ? {} : { maxTimeMS };
  try {
    const [page, total] = await Promise.all([
      // limit(0) would mean "no limit" to the server.
      query.limit === 0
        ? []
        : pageWithin(
            items
              .find(filter, { projection: withoutSearchFields, ...limited })
              .sort(searchSort(query))
              .skip(query.offset)
              .limit(query.limit),
            maxBytes,
          ),
      items.countDocuments(filter, limited),
    ]);
    return { items: page as ContentDocument[], total };
  } catch (error) {
    if (error instanceof MongoServerError && error.code === MAX_TIME_EXPIRED) {
      throw new TimeoutError(
        `the search ran past its deadline (${timeoutMs} ms) and was stopped (maxTimeMS)`,
      );
    }
    throw error;
  }
}

/**
 * The cursor's documents until they reach `maxBytes` of BSON (one at least), then the cursor is
 * closed: the rest of the page is never read (what the server sent in its batch aside).
 */
async function pageWithin(
  cursor: FindCursor<StoredItem>,
  maxBytes = Number.MAX_SAFE_INTEGER,
): Promise<StoredItem[]> {
  const page: StoredItem[] = [];
  let bytes = 0;
  try {
    for await (const doc of cursor) {
      if (page.length > 0 && bytes >= maxBytes) break;
      page.push(doc);
      bytes += BSON.calculateObjectSize(doc);
    }
  } finally {
    await cursor.close();
  }
  return page;
}

/** MaxTimeMSExpired: the server stopped an operation at its maxTimeMS. */
const MAX_TIME_EXPIRED = 50;

/** A key an item holds: its _id or one of its claims, unique across every claiming item. */
interface Claim {
  _id: string;
  owner: string;
}

/**
 * Claims the item's _id and then its claims, one insert each (FerretDB has no transactions,
 * and a unique _id is the one atomic check it offers): false as soon as one is another item's.
 * Of two items whose keys overlap, whichever claims the shared key first is stored, the other
 * is "already stored". Keys claimed before a refusal stay behind, owned by an item that was
 * not stored; they are earlier windows of the same words, so they only merge what was one.
 */
async function claimAll(claims: Collection<Claim>, doc: NewContentDocument): Promise<boolean> {
  for (const key of [doc._id, ...(doc.claims ?? [])]) {
    for (;;) {
      try {
        await claims.insertOne({ _id: key, owner: doc._id });
        break;
      } catch (error) {
        if ((error as { code?: unknown }).code !== DUPLICATE_KEY) throw error;
      }
      const holder = await claims.findOne({ _id: key });
      if (holder && holder.owner !== doc._id) return false;
      if (holder) break; // ours: a redelivery of this item
      // Deleted with its item meanwhile: claim it again.
    }
  }
  return true;
}

/** InsertResult, the documents this insert newly stored and those it found stored. */
type Stored = InsertResult & { stored: NewContentDocument[]; duplicates: NewContentDocument[] };

/**
 * Of items found already stored, those their own message stored (an earlier delivery of it, whose
 * worker died before counting them): the counts' delta of that message is written with them, or
 * found written. A read only when a batch meets items stored before (redeliveries, re-sends).
 */
async function storedByTheirMessage(
  items: Collection<StoredItem>,
  duplicates: NewContentDocument[],
): Promise<NewContentDocument[]> {
  const batchOf = new Map(
    duplicates.flatMap((doc) => (doc.batch === undefined ? [] : [[doc._id, doc.batch] as const])),
  );
  if (batchOf.size === 0) return [];
  const found = await items
    .find(
      { _id: { $in: [...batchOf.keys()] } },
      {
        projection: {
          _id: 1,
          batch: 1,
          device_name: 1,
          content_type: 1,
          timestamp: 1,
          received_at: 1,
        },
      },
    )
    .toArray();
  return found
    .filter((doc) => doc.batch !== undefined && doc.batch === batchOf.get(doc._id))
    .map((doc) => doc as NewContentDocument);
}

async function insertIgnoringStored(
  items: Collection<StoredItem>,
  docs: NewContentDocument[],
): Promise<Stored> {
  if (docs.length === 0) return { inserted: 0, alreadyStored: 0, stored: [], duplicates: [] }; // the driver rejects empty batches
  try {
    // Unordered inserts with deterministic _ids instead of upserts: on FerretDB upserts are 200x
    // slower, and a duplicate key per item is exactly the "already stored" answer we need.
    const stored = docs.map(({ claims: _claims, ...doc }): StoredItem => ({
      ...doc,
      ...searchFields(doc),
    }));
    const result = await items.insertMany(stored, { ordered: false });
    return { inserted: result.insertedCount, alreadyStored: 0, stored: docs, duplicates: [] };
  } catch (error) {
    const duplicates = duplicateKeyIndexes(error);
    if (duplicates === undefined) throw error;
    // Each duplicate names its document's index in the call: the others were stored now.
    const refused = new Set(duplicates);
    return {
      inserted: (error as MongoBulkWriteError).insertedCount,
      alreadyStored: duplicates.length,
      stored: docs.filter((_doc, index) => !refused.has(index)),
      duplicates: docs.filter((_doc, index) => refused.has(index)),
    };
  }
}

async function* scanChunks(
  items: Collection<StoredItem>,
  range: TimeRange,
  chunkSize: number,
): AsyncGenerator<ContentDocument[]> {
  if (!Number.isInteger(chunkSize) || chunkSize < 1) {
    throw new RangeError(`chunkSize must be a positive integer, got ${chunkSize}`);
  }
  const base = rangeFilter(range);
  let after: { timestamp: Date; _id: string } | undefined;
  for (;;) {
    // Keyset pagination on (timestamp, _id) rather than skip: each query starts strictly after
    // the last item returned, so equal timestamps across chunk borders come exactly once and
    // deletions of scanned items (the archive worker's job) do not shift the next chunk.
    const filter: Filter<StoredItem> = after
      ? {
          $and: [
            base,
            {
              $or: [
                { timestamp: { $gt: after.timestamp } },
                { timestamp: after.timestamp, _id: { $gt: after._id } },
              ],
            },
          ],
        }
      : base;
    const chunk = await translated('scanRange', () =>
      items
        .find(filter, { projection: withoutSearchFields })
        .sort({ timestamp: 1, _id: 1 })
        .limit(chunkSize)
        .toArray(),
    );
    if (chunk.length === 0) return;
    yield chunk;
    if (chunk.length < chunkSize) return;
    const last = chunk[chunk.length - 1]!;
    after = { timestamp: last.timestamp, _id: last._id };
  }
}

function rangeFilter(range: TimeRange): Filter<StoredItem> {
  const timestamp = range.from ? { $gte: range.from, $lt: range.to } : { $lt: range.to };
  return range.device === undefined ? { timestamp } : { device_name: range.device, timestamp };
}

function deleteFilter(range: DeleteRange): Filter<StoredItem> {
  const timestamp = {
    ...(range.from ? { $gte: range.from } : {}),
    ...(range.to ? { $lt: range.to } : {}),
  };
  return {
    ...(range.device !== undefined ? { device_name: range.device } : {}),
    ...(range.from || range.to ? { timestamp } : {}),
  };
}

async function translated<T>(operation: string, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    throw toStoreError(error, operation);
  }
}
