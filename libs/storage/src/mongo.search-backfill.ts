import type { AnyBulkWriteOperation } from 'mongodb';
import { mongoClient, type MongoClientOptions } from './mongo-connection';
import { searchFields, type StoredItem } from './mongo.content-search';
import { toStoreError } from './store-errors';

export interface SearchBackfillOptions extends MongoClientOptions {
  url: string;
  database: string;
  collection?: string;
  /** Items read and updated per round trip: bounds memory, whatever the collection's size. */
  chunkSize?: number;
  /** Called after each chunk with the counts so far (a long run shows it is moving). */
  onProgress?: (report: SearchBackfillReport) => void;
}

export interface SearchBackfillReport {
  /** Items found without search fields. */
  scanned: number;
  /** Of those, items this run gave search fields (the rest were deleted or filled meanwhile). */
  updated: number;
}

/**
 * Gives items stored before search existed the fields the mongo adapter keeps for it
 * (search_terms, search_text_length), so GET /search finds them. One pass over the items that
 * lack them, in chunks; each update applies only while the item still lacks them. Safe to run
 * while the ingest worker writes (new items come with the fields), safe to stop and run again:
 * a second run finds nothing to do.
 */
export async function backfillSearchTerms(
  options: SearchBackfillOptions,
): Promise<SearchBackfillReport> {
  const chunkSize = options.chunkSize ?? 500;
  if (!Number.isInteger(chunkSize) || chunkSize < 1) {
    throw new RangeError(`chunkSize must be a positive integer, got ${chunkSize}`);
  }
  const client = mongoClient(options.url, options, undefined, 'content store');
  const items = client
    .db(options.database)
    .collection<StoredItem>(options.collection ?? 'content_items');
  const lacking = { search_terms: { $exists: false } } as const;
  const report: SearchBackfillReport = { scanned: 0, updated: 0 };
  try {
    // One cursor, read in batches, rather than a query per chunk: FerretDB plans these filters
    // as scans, so re-querying from an _id per chunk would read the collection once per chunk.
    // An item seen twice (a server may return a moved document again) is harmless: its update
    // finds the fields there and changes nothing.
    const cursor = items.find(lacking).batchSize(chunkSize);
    let chunk: StoredItem[] = [];
    const flush = async () => {
      const updates = chunk.map((doc): AnyBulkWriteOperation<StoredItem> => ({
        updateOne: { filter: { _id: doc._id, ...lacking }, update: { $set: searchFields(doc) } },
      }));
      const result = await items.bulkWrite(updates, { ordered: false });
      report.scanned += chunk.length;
      report.updated += result.modifiedCount;
      chunk = [];
      options.onProgress?.({ ...report });
    };
    for await (const doc of cursor) {
      chunk.push(doc);
      if (chunk.length >= chunkSize) await flush();
    }
    if (chunk.length > 0) await flush();
    return report;
  } catch (error) {
    throw toStoreError(error, 'backfillSearchTerms');
  } finally {
    await client.close();
  }
}
