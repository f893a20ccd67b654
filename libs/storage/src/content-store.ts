import type { ContentType, DeviceListing, NewestItemTimes } from '@screenfleet/contracts';
import type { DeleteOptions, DeviceCounters, DeviceCountersQuery } from './device-counters';

/** One stored content item: what the ingest worker writes and the archive worker scans. */
export interface ContentDocument {
  /** Deterministic (derived by the ingest worker), so a re-sent item maps to the same _id. */
  _id: string;
  device_name: string;
  content_type: ContentType;
  /** UTC; the client's, or `received_at` when it sent none. */
  timestamp: Date;
  timestamp_source: 'client' | 'received';
  received_at: Date;
  /** null for transcriptions. */
  file_path: string | null;
  app_name: string | null;
  window_name: string | null;
  ocr_results: StoredOcrResult[];
  tags: string[];
  transcription: { text: string; engine: string | null } | null;
}

/**
 * An item to insert: its document, and further ids it claims besides its _id (the ingest
 * worker's identity rule for transcriptions without a timestamp: the next retry window's id).
 * Claims are not part of the stored document; an item goes with its claims when it is deleted.
 */
export type NewContentDocument = ContentDocument & {
  claims?: readonly string[];
  /**
   * The message that carries the item (the ingest worker's delivery), the same on every
   * redelivery: the mongo adapter counts each message's items once, even when a worker died
   * between storing them and counting them (sqlite does both in one transaction). Not part of
   * the document read back.
   */
  batch?: string;
};

export interface StoredOcrResult {
  text: string;
  confidence: number | null;
  text_json: string | null;
  ocr_engine: string | null;
  focused: boolean | null;
}

export interface InsertOptions {
  /**
   * The items come back from the archive (a restore, or an archive pass undoing its delete): the
   * newly stored ones are also taken off their devices' `itemsArchived`, so an item is never
   * counted both as stored and as archived (nor twice once archived again).
   */
  restored?: boolean;
}

export interface InsertResult {
  inserted: number;
  /** Items whose _id was stored before (or earlier in the same call): success, not an error. */
  alreadyStored: number;
}

export interface TimeRange {
  /** Inclusive; absent means from the beginning. */
  from?: Date;
  /** Exclusive. */
  to: Date;
  device?: string;
}

/** What a delete covers: [from, to), either bound absent for no bound, of one device when given. */
export interface DeleteRange {
  /** Inclusive. */
  from?: Date;
  /** Exclusive. */
  to?: Date;
  device?: string;
}

/** What one deleteRange call removed. */
export interface DeletedItems {
  /**
   * How many items went, by device and content type (those with none are left out): what the
   * per-device counters lose. The SQLite adapter computes it inside the transaction that deletes
   * the items, so a counter update placed there commits with them.
   */
  counts: Array<{ device_name: string; content_type: ContentType; items: number }>;
  /** The distinct non-null file paths the deleted items named (their media files). */
  filePaths: string[];
}

/** What GET /search asks the store (the gateway parsed and resolved it; see libs/contracts). */
export interface SearchQuery {
  /**
   * Normalised words (libs/contracts searchTerms(q): lower case, diacritics folded, unicode word
   * split); an item matches when its text (itemText) holds every one as a whole word. The stores
   * normalise them again (idempotent), so unnormalised words work too. Empty: no text filter.
   */
  terms: string[];
  /** The content types to include; empty matches nothing. */
  contentTypes: ContentType[];
  /** Inclusive bounds on the item's timestamp. */
  from?: Date;
  to?: Date;
  /** Only these devices' items (a device_name filter, a device-bound token, or both). */
  devices?: string[];
  /** Within the name, case-insensitive (substring); items without one never match. */
  appName?: string;
  windowName?: string;
  /** Characters (code points, textLength) of the item's text (itemText), inclusive. */
  minLength?: number;
  maxLength?: number;
  /**
   * newest: timestamp descending; items of the same millisecond in an order that is stable but
   * the store's own (mongo: _id descending; sqlite: the order they were stored, latest first).
   * relevance (with terms; without, it is newest): best text match first, then newest. sqlite
   * ranks by BM25; mongo (FerretDB computes no score) by the shortest text, which is BM25's
   * order once term frequencies are left out. Both put a short text holding the words above a
   * long one.
   */
  order: 'newest' | 'relevance';
  /** Items per page; 0 gives only the total. */
  limit: number;
  offset: number;
}

export interface SearchOptions {
  /**
   * How long the search may run: past it the store stops it (SQLite interrupts the statement,
   * MongoDB's maxTimeMS) and it rejects TimeoutError (libs/contracts), so no search outlives the
   * request that asked for it. Absent: no limit.
   */
  timeoutMs?: number;
  /**
   * The page ends early once its items' stored documents reach this many bytes (JSON in
   * sqlite, BSON in mongo), with one item at least: what a search reads, parses and answers is
   * bounded by bytes as well as by `limit`. Absent: by count alone.
   */
  maxBytes?: number;
}

export interface SearchResult {
  /** One page, in the query's order: `limit` items, fewer at the end or past `maxBytes`. */
  items: ContentDocument[];
  /** Every item the same filters match, whatever the page: paging until offset >= total ends. */
  total: number;
}

/**
 * The content_items collection, named after what the workers need. Errors meaning the server
 * cannot be reached reject with StoreUnavailableError (retry with backoff); others pass through.
 */
export interface ContentStore {
  /** Idempotent. */
  ensureIndexes(): Promise<void>;
  /**
   * Idempotent: re-inserting stored _ids counts them as alreadyStored, never duplicates. An
   * item with claims is also alreadyStored when its _id or one of its claims was claimed by
   * another stored item: of items whose ids and claims overlap, one is stored, whatever the
   * order or concurrency of the inserts.
   */
  insertItems(docs: NewContentDocument[], options?: InsertOptions): Promise<InsertResult>;
  /**
   * Items in [from, to) ordered by (timestamp, _id), at most `chunkSize` per chunk. Keyset
   * pagination, so items deleted or inserted behind the cursor do not shift what comes next.
   */
  scanRange(range: TimeRange, options: { chunkSize: number }): AsyncIterable<ContentDocument[]>;
  countRange(range: TimeRange): Promise<number>;
  /**
   * Returns how many were deleted (their claims go with them); unknown ids are ignored. The
   * deleted items are subtracted from their devices' counters (and added to the archive
   * counters with `archived`): sqlite in the same transaction, mongo right after.
   */
  deleteByIds(ids: string[], options?: DeleteOptions): Promise<number>;
  /**
   * Deletes at most `limit` items of the range, oldest first, with their search entries and
   * claims, in one transaction (SQLite: one writer operation, so the writer thread is never held
   * longer than that many deletes take). Fewer than `limit` deleted: the range is empty now. A
   * call on an empty range deletes nothing and answers no counts. The deleted items are
   * subtracted from their devices' counters, and each touched device's first and last item
   * times are set from the items it still holds (a privacy delete leaves no trace of their
   * times), at a cost that does not grow with the device's history (device-counters.ts).
   */
  deleteRange(range: DeleteRange, options: { limit: number }): Promise<DeletedItems>;
  /**
   * Which of these file paths some stored item still names: the archive worker deletes a media
   * file only when none does (many frames share one video file).
   */
  filePathsInUse(paths: string[]): Promise<Set<string>>;
  /**
   * The per-device counters kept with every insert and delete (device-counters.ts says what
   * each counts), sorted by device name; no item is counted on request.
   */
  deviceCounters(query: DeviceCountersQuery): Promise<DeviceCounters[]>;
  /**
   * Each device's listing row (those named, else all with counters), sorted by device name:
   * its first and latest received batch and newest item per content type, from the same
   * counters, nothing counted (what a fleet list sorts and filters on, read on every request).
   */
  deviceListing(devices?: readonly string[]): Promise<DeviceListing[]>;
  /**
   * The newest item time of each content type (ms; null when none) over the devices named, else
   * over every device with counters: the same counters' last item times (deviceListing's
   * last_frame_ms / last_transcription_ms, folded), read without listing any device: an index
   * seek per type, whatever the fleet's size (GET /health reads it about once a second). With
   * `timeoutMs`, stopped past it as search is (rejects TimeoutError): no read outlives its asker.
   */
  newestItemTimes(
    devices?: readonly string[],
    options?: Pick<SearchOptions, 'timeoutMs'>,
  ): Promise<NewestItemTimes>;
  /**
   * After a delete of a whole device: removes its archive counters and those of its content
   * types that count no item any more. Items the device stored since its last deleted chunk (a
   * producer still sending) stay counted, with their times.
   */
  forgetDevice(device: string): Promise<void>;
  /** Reads what is committed now: an item inserted before the call is found by it. */
  search(query: SearchQuery, options?: SearchOptions): Promise<SearchResult>;
  close(): Promise<void>;
}
