import {
  AppError,
  initialArchiveState,
  type ArchiveSettings,
  type ArchiveState,
} from '@screenfleet/contracts';
import type {
  ArchiveStateStore,
  ArchiveStore,
  ContentDocument,
  ContentStore,
} from '@screenfleet/storage';
import { withCommandFields, DAY_MS, type PassFields } from './archive-state';
import { openKeysFor } from './archive-keys';
import {
  encodeChunk,
  PLAIN,
  sealBytes,
  type ArchiveKeyring,
  type EncodedChunk,
} from './chunk-codec';
import { buildManifest, chunkKeys, type ManifestSkippedMedia } from './manifest';
import { sweepArchive, type SweepReport } from './sweep';
import type { MediaFiles } from './media-files';
import { removeMedia, unreferencedMedia } from './media-cleanup';
import { collectMedia, sealMedia } from './chunk-media';
import { addedBytes, deleteReplaced, replacedObjects } from './replaced-objects';
import { putBack } from './put-back';

export interface ArchiverDeps {
  content: Pick<
    ContentStore,
    'scanRange' | 'countRange' | 'deleteByIds' | 'filePathsInUse' | 'insertItems'
  >;
  archive: Pick<
    ArchiveStore,
    'put' | 'verify' | 'size' | 'list' | 'get' | 'delete' | 'removeUnfinished'
  >;
  state: Pick<ArchiveStateStore, 'load' | 'update'>;
  /** Absent when no media root is configured: file paths are then never read or deleted. */
  media?: MediaFiles;
  /** Its writer seals every object (AES-256-GCM); absent or without a writer: plain objects. */
  keyring?: ArchiveKeyring;
  chunkSize: number;
  /** The settings an archive starts with (the environment's), before anyone changed them. */
  defaults: ArchiveSettings;
  now?: () => Date;
  /** Called at each step; tests stop here to play a crash. */
  onStep?: (step: PassStep) => Promise<void>;
  /** Called before each chunk; false ends the pass (the lease is lost, or a stop was asked). */
  mayContinue?: () => Promise<boolean>;
  /**
   * Renews the lease and says whether this worker still holds it; asked right before a chunk is
   * recorded and right before items are deleted. False abandons the chunk in hand with nothing
   * recorded or deleted: whoever holds the lease now redoes it (its objects get keys of their own).
   */
  holdsLease?: () => Promise<boolean>;
  observer?: PassObserver;
}

export type PassStep = 'uploaded' | 'recorded' | 'deleted';

/** What the metrics watch, without the domain knowing prom-client. */
export interface PassObserver {
  chunkArchived(chunk: { items: number; media: number; bytes: number }): void;
  /** A media file of an archived chunk that was not uploaded (listed in its manifest). */
  mediaSkipped?(file: ManifestSkippedMedia & { chunk_key: string }): void;
  /** An archived media file that could not be deleted locally (it stays on disk). */
  mediaNotRemoved?(file: { file_path: string; detail: string }): void;
}

export type PassOutcome =
  | 'done'
  | 'disabled'
  | 'storage_limit'
  | 'failed'
  /** Stopped before the cutoff because mayContinue said so; nothing half done. */
  | 'interrupted'
  /** The lease was lost mid-chunk: the chunk was abandoned unrecorded, nothing deleted. */
  | 'lease_lost'
  /** Not run: a restore or a rekey held the archive (the task lease); the next tick tries again. */
  | 'busy';

export interface PassReport {
  outcome: PassOutcome;
  chunks: number;
  items: number;
  mediaFiles: number;
  /** Consecutive failed passes after this one (0 after a success): the loop's backoff. */
  failures: number;
  error?: string;
}

/** Thrown when the store does not hold what was just written: nothing is deleted. */
export class NotVerifiedError extends AppError {
  constructor(key: string) {
    super(
      'operation_failed',
      `archive object ${key} is not in the store as written (verify failed)`,
    );
  }
}

/** Thrown inside a pass when the lease is gone: the pass stops without writing anything. */
class LeaseLostError extends Error {
  constructor(before: string) {
    super(`the archive lease was lost before ${before}`);
  }
}

/**
 * One archive pass: every item older than the cutoff (now - retention_days) moves to the
 * archive store, a chunk at a time, in (timestamp, _id) order:
 *   upload chunk + media + manifest -> verify each in the store -> record (watermark, counters,
 *   storage_used and the chunk's ids as cleanup_pending) -> delete the items and media locally
 *   -> clear cleanup_pending.
 * An item is deleted only after its chunk is verified and recorded. A crash before the record
 * leaves the items in place (the next pass uploads the same chunk again under the same key); a
 * crash after it leaves cleanup_pending, which the next pass finishes first.
 */
export function createArchiver(deps: ArchiverDeps) {
  const now = deps.now ?? (() => new Date());
  const step = async (name: PassStep) => deps.onStep?.(name);
  let uploading = false;
  let mediaPending = 0;

  /**
   * Writes these progress fields only (never the settings or run requests, which commands own),
   * then reads the settings back: a configure that landed meanwhile (enabled false, a new
   * retention) applies from the next chunk.
   */
  async function record(state: ArchiveState, fields: Partial<PassFields>): Promise<ArchiveState> {
    const written = { ...fields, updated_at: now() };
    await deps.state.update(written);
    const stored = await deps.state.load(initialArchiveState(deps.defaults, now()));
    return withCommandFields({ ...state, ...written }, stored);
  }

  async function ensureLease(before: string): Promise<void> {
    if (deps.holdsLease && !(await deps.holdsLease())) throw new LeaseLostError(before);
  }

  /**
   * Deletes the recorded chunk's items (and then its media files) locally. The lease is renewed
   * right before the delete, which leaves the window of the delete call itself: a call that
   * stalls past the lease's TTL can land after another holder, or a restore, took over, and a
   * restore may have put these items back meanwhile. So the lease is confirmed again once the
   * call returned: lost, the items are put back (from `docs`, or from the archived chunk) for the
   * next holder to archive again, which is harmless, where a restored item deleted is not.
   */
  async function finishCleanup(
    state: ArchiveState,
    docs?: readonly ContentDocument[],
  ): Promise<ArchiveState> {
    const pending = state.cleanup_pending;
    if (!pending) return state;
    await ensureLease('deleting archived items');
    // `archived`: the store adds them to their devices' archive counters (GET /devices).
    await deps.content.deleteByIds(pending.item_ids, { archived: true });
    await step('deleted');
    const unreferencedPaths = await unreferenced(pending.media_paths);
    if (deps.holdsLease && !(await deps.holdsLease())) {
      await putBack({ ...deps, now }, pending, docs);
      throw new LeaseLostError('its delete of archived items returned (they are put back)');
    }
    await removeArchivedMedia(unreferencedPaths);
    return record(state, { cleanup_pending: null });
  }

  const unreferenced = (paths: string[]) => unreferencedMedia(deps.content, deps.media, paths);
  const removeArchivedMedia = (paths: string[]) =>
    removeMedia(deps.media, paths, (file) => deps.observer?.mediaNotRemoved?.(file));

  /** Deletes what the new manifest replaced, and takes their bytes off storage_used. */
  async function removeReplaced(
    state: ArchiveState,
    replaced: Array<{ key: string; size: number }>,
  ): Promise<ArchiveState> {
    if (replaced.length === 0) return state;
    const freed = await deleteReplaced(deps.archive, replaced);
    return freed === 0 ? state : record(state, { storage_used: state.storage_used - freed });
  }

  async function putVerified(key: string, sealed: EncodedChunk): Promise<void> {
    await deps.archive.put(key, sealed.body, { sha256: sealed.sha256 });
    if (!(await deps.archive.verify(key, sealed.sha256))) throw new NotVerifiedError(key);
  }

  async function archiveChunk(
    state: ArchiveState,
    docs: ContentDocument[],
  ): Promise<{ state: ArchiveState; limited: boolean; media: number }> {
    const keys = chunkKeys(docs);
    const { found, skipped } = await collectMedia(deps.media, docs);
    mediaPending = found.length;
    const sealedMedia = await sealMedia(
      deps.media,
      deps.keyring?.writer,
      found,
      skipped,
      keys.media,
    );
    const chunk = encodeChunk(docs, deps.keyring?.writer);
    const chunkKey = keys.chunk(chunk.sha256);
    const manifest = buildManifest(
      docs,
      { key: chunkKey, sha256: chunk.sha256, size: chunk.body.length },
      sealedMedia.map((m) => m.entry),
      now(),
      skipped,
    );
    const sealedManifest = sealBytes(Buffer.from(JSON.stringify(manifest)), deps.keyring?.writer);
    const uploads = [
      ...sealedMedia.map((m) => ({ key: m.entry.key, sealed: m.sealed })),
      { key: chunkKey, sealed: chunk },
      { key: keys.manifest, sealed: sealedManifest },
    ];
    const { bytes, overwritten } = await addedBytes(deps.archive, uploads);
    const replaced = overwritten.has(keys.manifest)
      ? await replacedObjects(deps.archive, deps.keyring, state, keys.manifest, uploads)
      : [];

    const limit = state.settings.storage_limit;
    if (state.storage_used + bytes > limit) {
      const error =
        `storage limit reached: ${state.storage_used} of ${limit} bytes used and the next ` +
        `chunk needs ${bytes}; uploading stopped (raise the limit or free space, then run)`;
      return {
        state: await record(state, { last_error: error, media_files_pending: mediaPending }),
        limited: true,
        media: 0,
      };
    }

    // Recorded before an object is sealed with it, so a start can tell a key is missing.
    const seal = deps.keyring?.writer?.id ?? PLAIN;
    if (state.sealed_with && !state.sealed_with.includes(seal)) {
      state = await record(state, { sealed_with: [...state.sealed_with, seal] });
    }
    // Media and chunk before the manifest: a manifest never names an object that is not there.
    const manifestUpload = uploads.pop()!;
    for (const { key, sealed } of uploads) await putVerified(key, sealed);
    // A worker that lost its lease must not replace the holder's manifest (naming a copy the
    // holder's sweep may remove): confirmed right before.
    await ensureLease('writing a manifest');
    await putVerified(manifestUpload.key, manifestUpload.sealed);
    await step('uploaded');

    const last = docs[docs.length - 1]!;
    const watermark =
      state.watermark && compareKey(state.watermark, last) > 0
        ? state.watermark
        : { timestamp: last.timestamp, id: last._id };
    mediaPending = 0;
    await ensureLease('recording a chunk');
    // One update: the cleanup list, the watermark and the counters land together or not at all.
    const recorded = await record(state, {
      cleanup_pending: {
        chunk_key: chunkKey,
        archived_at: new Date(manifest.created_at),
        item_ids: docs.map((doc) => doc._id),
        // Only what was uploaded: a file that failed to read is not deleted.
        media_paths: sealedMedia.map((m) => m.entry.file_path),
      },
      watermark,
      storage_used: state.storage_used + bytes,
      counters: {
        chunks_uploaded: state.counters.chunks_uploaded + 1,
        items_archived: state.counters.items_archived + docs.length,
        media_files_uploaded: state.counters.media_files_uploaded + sealedMedia.length,
      },
      media_files_pending: 0,
    });
    await step('recorded');
    deps.observer?.chunkArchived({ items: docs.length, media: sealedMedia.length, bytes });
    for (const file of skipped) deps.observer?.mediaSkipped?.({ ...file, chunk_key: chunkKey });
    const cleaned = await removeReplaced(await finishCleanup(recorded, docs), replaced);
    return { state: cleaned, limited: false, media: sealedMedia.length };
  }

  async function runPass(options: { manual?: boolean } = {}): Promise<PassReport> {
    const report: PassReport = { outcome: 'done', chunks: 0, items: 0, mediaFiles: 0, failures: 0 };
    let state = await deps.state.load(initialArchiveState(deps.defaults, now()));
    if (options.manual) state = { ...state, failures: 0 };
    report.failures = state.failures;
    if (!state.settings.enabled) return { ...report, outcome: 'disabled' };
    uploading = true;
    try {
      state = await finishCleanup(state);
      const cutoff = new Date(now().getTime() - state.settings.retention_days * DAY_MS);
      // From the beginning, not from the watermark: everything before the cutoff still here is
      // unarchived (archived items were deleted above), including items that arrived late with
      // old timestamps, which a scan from the watermark would leave behind for ever.
      for await (const docs of deps.content.scanRange(
        { to: cutoff },
        { chunkSize: deps.chunkSize },
      )) {
        if (!state.settings.enabled || (deps.mayContinue && !(await deps.mayContinue()))) {
          // Stopping or disabled: clear the flag. Lease lost: the new holder owns it; leave it.
          if (state.uploading_since && !(deps.holdsLease && !(await deps.holdsLease()))) {
            await record(state, { uploading_since: null });
          }
          return { ...report, outcome: state.settings.enabled ? 'interrupted' : 'disabled' };
        }
        if (!state.uploading_since) state = await record(state, { uploading_since: now() });
        const result = await archiveChunk(state, docs);
        state = result.state;
        if (result.limited) {
          await record(state, { uploading_since: null });
          return { ...report, outcome: 'storage_limit', error: state.last_error! };
        }
        report.chunks += 1;
        report.items += docs.length;
        report.mediaFiles += result.media;
      }
      await record(state, {
        last_cleanup: now(),
        last_error: null,
        failures: 0,
        media_files_pending: 0,
        uploading_since: null,
      });
      return { ...report, failures: 0 };
    } catch (error) {
      // Another worker holds the lease and owns the state now: write nothing, count nothing.
      if (error instanceof LeaseLostError)
        return { ...report, outcome: 'lease_lost', error: error.message };
      const message = error instanceof Error ? error.message : String(error);
      const failures = state.failures + 1;
      // Best effort: when the state store itself is down this fails too, and the error stands.
      await record(state, {
        last_error: message,
        failures,
        media_files_pending: mediaPending,
        uploading_since: null,
      }).catch(() => undefined);
      return { ...report, outcome: 'failed', error: message, failures };
    } finally {
      uploading = false;
    }
  }

  return {
    runPass,
    /** True while a pass works on chunks. */
    isUploading: () => uploading,
    /** Media files of the chunk in hand not uploaded yet. */
    mediaFilesPending: () => mediaPending,
    /**
     * What a worker does when it takes the lease, before its first pass (holding the task lease):
     * sweeps what crashes left (sweepArchive: chunk and media copies no manifest names, temp
     * files of killed writes), then sets storage_used to the bytes the store holds, so that what
     * no one counted or removed (a crashed or late worker's copies, a double count) stops
     * skewing the storage limit. One listing of the whole store, so once per takeover only.
     */
    async takeOver(): Promise<{ before: number; after: number; sweep: SweepReport }> {
      const state = await deps.state.load(initialArchiveState(deps.defaults, now()));
      const sweep = await sweepArchive({
        archive: deps.archive,
        keys: openKeysFor(deps.keyring, state),
      });
      const after = sweep.storedBytes;
      if (state.storage_used !== after) {
        await deps.state.update({ storage_used: after, updated_at: now() });
      }
      return { before: state.storage_used, after, sweep };
    },
    /** Items still to archive: everything before the cutoff that is in the content store. */
    async pendingCount(settings: ArchiveSettings): Promise<number> {
      return deps.content.countRange({
        to: new Date(now().getTime() - settings.retention_days * DAY_MS),
      });
    },
  };
}

export type Archiver = ReturnType<typeof createArchiver>;

function compareKey(a: { timestamp: Date; id: string }, b: ContentDocument): number {
  const dt = a.timestamp.getTime() - b.timestamp.getTime();
  if (dt !== 0) return dt;
  return a.id < b._id ? -1 : a.id > b._id ? 1 : 0;
}
