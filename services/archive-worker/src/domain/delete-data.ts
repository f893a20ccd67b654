import {
  ConflictError,
  deletedRangeCovers,
  initialArchiveState,
  type ArchiveDeletedRange,
  type ArchiveSettings,
  type ContentType,
  type DataDeletedCounts,
} from '@screenfleet/contracts';
import type { ArchiveStateStore, ArchiveStore, ContentStore } from '@screenfleet/storage';
import type { OpenKeys } from './chunk-codec';
import type { MediaFiles } from './media-files';
import { removeMedia, unreferencedMedia } from './media-cleanup';
import {
  archivedChunkReader,
  inArchivedRange,
  type ArchivedRange,
  type UnreadableObject,
} from './restore';

export interface DeleteDeps {
  content: Pick<ContentStore, 'deleteRange' | 'filePathsInUse' | 'forgetDevice'>;
  archive: Pick<ArchiveStore, 'list' | 'get'>;
  state: Pick<ArchiveStateStore, 'load' | 'update'>;
  /** The settings of an archive that has no state yet (the environment's). */
  defaults: ArchiveSettings;
  /** What opens the archived objects (openKeysFor); absent: plain objects only. */
  keys?: OpenKeys;
  /** Absent when no media root is configured: no file is deleted then. */
  media?: MediaFiles;
  /**
   * Items deleted per content store call: each is one transaction (one writer operation in the
   * embedded mode), so a large range never holds the writer for long.
   */
  chunkSize: number;
  /**
   * Awaited after each chunk with how long it took: where the composition leaves the store to
   * the producers (a delete is background work; back to back it starved their writes).
   */
  afterChunk?: (tookMs: number) => Promise<void>;
  now: () => Date;
  /** Asked before each step: false once the task lease is lost, which stops the delete. */
  stillHeld?: () => boolean;
  /** A media file that could not be removed (it stays on disk; its items are gone). */
  mediaNotRemoved?: (file: { file_path: string; detail: string }) => void;
}

export interface DeleteReport {
  /** Items deleted from the content store, by device and content type. */
  items: Map<string, Record<ContentType, number>>;
  /** Archived items newly recorded as deleted, by device. */
  archived: Map<string, number>;
  mediaFiles: number;
  /** Archived objects of the range that could not be read (their items are covered all the same). */
  unreadable: UnreadableObject[];
}

/**
 * Deletes what was captured in a range (of one device, when named), holding the archive's task
 * lease (the caller's), so no pass or restore runs beside it:
 *   record the archived items of the range as deleted (so no restore brings them back)
 *   -> delete the items, a bounded chunk at a time (search entries go with them)
 *   -> after each chunk, the media files no remaining item names
 *   -> a whole device's counters forgotten (GET /devices).
 * Each chunk keeps the devices' counters right as it deletes (counts and item times), at a
 * cost of its own items: nothing rereads a device's history, so producers are never held up.
 * The archived items are recorded first: a delete that stops half way (a crash, a lost lease)
 * has made sure they stay out, and running it again finishes the rest. A repeated delete finds
 * nothing left to delete or record, answers zeros and writes nothing.
 */
export async function deleteCaptured(
  deps: DeleteDeps,
  range: ArchivedRange,
): Promise<DeleteReport> {
  const report: DeleteReport = {
    items: new Map(),
    archived: new Map(),
    mediaFiles: 0,
    unreadable: [],
  };
  const ensureHeld = () => {
    if (deps.stillHeld && !deps.stillHeld()) throw lostLease(report);
  };
  await recordArchivedDeletion(deps, range, report);
  for (;;) {
    ensureHeld();
    const started = performance.now();
    const deleted = await deps.content.deleteRange(range, { limit: deps.chunkSize });
    let count = 0;
    for (const { device_name, content_type, items } of deleted.counts) {
      const byType = report.items.get(device_name) ?? { frames: 0, transcription: 0 };
      byType[content_type] += items;
      report.items.set(device_name, byType);
      count += items;
    }
    const unreferenced = await unreferencedMedia(deps.content, deps.media, deleted.filePaths);
    report.mediaFiles += await removeMedia(deps.media, unreferenced, deps.mediaNotRemoved);
    await deps.afterChunk?.(performance.now() - started);
    if (count < deps.chunkSize) {
      // A whole device leaves GET /devices, archive counts and all (but what it sent since).
      if (range.device !== undefined && range.from === undefined && range.to === undefined) {
        await deps.content.forgetDevice(range.device);
      }
      return report;
    }
  }
}

/**
 * Counts the archived items of the range that no earlier delete covers, by reading the chunks
 * that may hold them (a manifest names its chunk's devices, not how many items each has, nor
 * their times), and records the range in ArchiveState.deleted_ranges when there are some, or
 * when objects of the range could not be read (and this very range is not recorded yet).
 */
async function recordArchivedDeletion(
  deps: DeleteDeps,
  range: ArchivedRange,
  report: DeleteReport,
): Promise<void> {
  const state = await deps.state.load(initialArchiveState(deps.defaults, deps.now()));
  const earlier = state.deleted_ranges ?? [];
  const reader = archivedChunkReader(deps, report.unreadable);
  for await (const { manifest, docs } of reader.chunks(range, () => lostLease(report))) {
    const archivedAt = new Date(manifest.created_at);
    for (const doc of docs) {
      if (!inArchivedRange(doc, range)) continue;
      if (earlier.some((deleted) => deletedRangeCovers(deleted, doc, archivedAt))) continue;
      report.archived.set(doc.device_name, (report.archived.get(doc.device_name) ?? 0) + 1);
    }
  }
  const recorded: ArchiveDeletedRange = {
    from: range.from ?? null,
    to: range.to ?? null,
    device_name: range.device ?? null,
    deleted_at: deps.now(),
  };
  // An unreadable object may hold items archived after an earlier record of this very range,
  // which that record does not cover: record it again, now. A later record of the same range
  // covers all the earlier one did, so it replaces it (repeated deletes do not grow the list).
  if (report.archived.size > 0 || report.unreadable.length > 0) {
    if (deps.stillHeld && !deps.stillHeld()) throw lostLease(report);
    const others = earlier.filter((deleted) => !sameRange(deleted, recorded));
    await deps.state.update({ deleted_ranges: [...others, recorded] });
  }
}

function sameRange(a: ArchiveDeletedRange, b: ArchiveDeletedRange): boolean {
  return (
    a.from?.getTime() === b.from?.getTime() &&
    a.to?.getTime() === b.to?.getTime() &&
    a.device_name === b.device_name
  );
}

function lostLease(report: DeleteReport): ConflictError {
  const items = [...report.items.values()].reduce((n, c) => n + c.frames + c.transcription, 0);
  return new ConflictError(
    `the delete lost the archive's task lease (another task may run now; is the state store reachable?) after ${items} items deleted: run it again (a repeated delete finishes what is left)`,
  );
}

/** The report as the API answers it (archive.reply `deleted`, the HTTP body's counts). */
export function toDeletedCounts(report: DeleteReport): DataDeletedCounts {
  const names = [...new Set([...report.items.keys(), ...report.archived.keys()])].sort();
  const devices = names.map((device_name) => {
    const items = report.items.get(device_name) ?? { frames: 0, transcription: 0 };
    return {
      device_name,
      items_deleted: items.frames + items.transcription,
      archived_items_deleted: report.archived.get(device_name) ?? 0,
    };
  });
  const sum = (pick: (items: Record<ContentType, number>) => number) =>
    [...report.items.values()].reduce((n, items) => n + pick(items), 0);
  return {
    items_deleted: sum((items) => items.frames + items.transcription),
    frames_deleted: sum((items) => items.frames),
    audio_transcriptions_deleted: sum((items) => items.transcription),
    media_files_deleted: report.mediaFiles,
    // A frame's media file is its video or image; transcriptions carry no file.
    video_files_deleted: report.mediaFiles,
    audio_files_deleted: 0,
    archived_items_deleted: devices.reduce((n, device) => n + device.archived_items_deleted, 0),
    archived_objects_unreadable: report.unreadable.length,
    devices,
  };
}
