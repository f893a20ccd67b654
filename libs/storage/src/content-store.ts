import type { ContentType } from '@screenfleet/contracts';

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

export interface StoredOcrResult {
  text: string;
  confidence: number | null;
  text_json: string | null;
  ocr_engine: string | null;
  focused: boolean | null;
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

/**
 * The content_items collection, named after what the workers need. Errors meaning the server
 * cannot be reached reject with StoreUnavailableError (retry with backoff); others pass through.
 */
export interface ContentStore {
  /** Idempotent. */
  ensureIndexes(): Promise<void>;
  /** Idempotent: re-inserting stored _ids counts them as alreadyStored, never duplicates. */
  insertItems(docs: ContentDocument[]): Promise<InsertResult>;
  /**
   * Items in [from, to) ordered by (timestamp, _id), at most `chunkSize` per chunk. Keyset
   * pagination, so items deleted or inserted behind the cursor do not shift what comes next.
   */
  scanRange(range: TimeRange, options: { chunkSize: number }): AsyncIterable<ContentDocument[]>;
  countRange(range: TimeRange): Promise<number>;
  /** Returns how many were deleted; unknown ids are ignored. */
  deleteByIds(ids: string[]): Promise<number>;
  /**
   * Which of these file paths some stored item still names: the archive worker deletes a media
   * file only when none does (many frames share one video file).
   */
  filePathsInUse(paths: string[]): Promise<Set<string>>;
  close(): Promise<void>;
}
