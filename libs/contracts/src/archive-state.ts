/**
 * The archive's persisted state: one document, so a restart or another worker resumes from it.
 * The archive worker decides its values; the ArchiveStateStore adapters (libs/storage) keep it.
 */

/** Where the archive has got to: the last item moved out, in (timestamp, _id) order. */
export interface ArchiveWatermark {
  timestamp: Date;
  id: string;
}

/** Cumulative since the archive was created; Prometheus `_total` counters mirror them. */
export interface ArchiveCounters {
  chunks_uploaded: number;
  items_archived: number;
  media_files_uploaded: number;
}

/** Changeable at run time (POST /archive/configure, /archive/init); env gives the first values. */
export interface ArchiveSettings {
  enabled: boolean;
  retention_days: number;
  /** Bytes; uploading stops before the next chunk would pass it. */
  storage_limit: number;
}

/**
 * A chunk that is verified in the archive store and recorded in the watermark, but whose items
 * (and media files) may not be deleted locally yet. Saved together with the watermark, cleared
 * once the deletes are done: a worker that crashed in between finishes them on its next pass,
 * so no archived item stays in the content store for ever.
 */
export interface ArchivedChunkCleanup {
  chunk_key: string;
  item_ids: string[];
  /** Media files (absolute, under the media root) uploaded with the chunk. */
  media_paths: string[];
  /** Its manifest's created_at: which deletes cover its items (absent before this was kept). */
  archived_at?: Date;
}

/**
 * Archived items deleted (POST /data/delete-range, /data/delete-device): an item in a chunk
 * archived at or before `deleted_at`, whose time is in [from, to) (a null bound: unbounded) and
 * whose device is `device_name` (null: every device), is never restored. A chunk archived after
 * `deleted_at` holds items that were stored again after the delete, and those restore as usual.
 */
export interface ArchiveDeletedRange {
  from: Date | null;
  to: Date | null;
  device_name: string | null;
  deleted_at: Date;
}

/** True when `deleted` covers an item of `device` at `timestamp` in a chunk archived at `archivedAt`. */
export function deletedRangeCovers(
  deleted: ArchiveDeletedRange,
  item: { device_name: string; timestamp: Date },
  archivedAt: Date,
): boolean {
  return (
    archivedAt <= deleted.deleted_at &&
    (deleted.device_name === null || deleted.device_name === item.device_name) &&
    (deleted.from === null || item.timestamp >= deleted.from) &&
    (deleted.to === null || item.timestamp < deleted.to)
  );
}

/** The one archive state document: a restart, or another worker, resumes from it. */
export interface ArchiveState {
  settings: ArchiveSettings;
  /** Set by POST /archive/init (screenpipe's desktop app); a second init is a 409. */
  initialised_at: Date | null;
  watermark: ArchiveWatermark | null;
  last_cleanup: Date | null;
  last_error: string | null;
  /** Bytes the archive store holds (chunks, manifests and media). */
  storage_used: number;
  counters: ArchiveCounters;
  /** Consecutive failed passes: the backoff doubles with each, and a manual run resets it. */
  failures: number;
  /** See ArchivedChunkCleanup; null when every archived item is deleted locally. */
  cleanup_pending: ArchivedChunkCleanup | null;
  /** Media files of the chunk in hand that are not uploaded yet (0 when idle). */
  media_files_pending: number;
  /** Set while the lease holder uploads, so any worker's status shows is_uploading. */
  uploading_since: Date | null;
  /** Set by POST /archive/run on any worker; the lease holder starts a pass when it sees it. */
  run_requested_at: Date | null;
  /** Written after each pass, so status answers from the state without scanning. */
  updated_at: Date;
  /**
   * What the archived objects may be sealed with: key ids, and "plain" for unencrypted objects.
   * A pass adds its key's id before it writes with it; `archive:rekey` leaves only the current
   * one. A start compares it with the configured keys (a missing one is found without reading
   * the store), and plain objects are refused once "plain" is not in it. Absent in an archive
   * from before key ids: then learnt from the manifests at start.
   */
  sealed_with?: string[];
  /**
   * Deleted ranges of archived items, oldest first (ArchiveDeletedRange): a restore skips what
   * they cover. Only added to by a delete that covered archived items; absent until then.
   */
  deleted_ranges?: ArchiveDeletedRange[];
}

/** The state of an archive that never ran: the given settings, no progress. */
export function initialArchiveState(settings: ArchiveSettings, now: Date): ArchiveState {
  return {
    settings,
    initialised_at: null,
    watermark: null,
    last_cleanup: null,
    last_error: null,
    storage_used: 0,
    counters: { chunks_uploaded: 0, items_archived: 0, media_files_uploaded: 0 },
    failures: 0,
    cleanup_pending: null,
    media_files_pending: 0,
    uploading_since: null,
    run_requested_at: null,
    updated_at: now,
    sealed_with: [],
  };
}
