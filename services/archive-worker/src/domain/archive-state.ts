import type { ArchiveSettings, ArchiveState } from '@screenfleet/storage';

/** The state of an archive that never ran: settings from the environment, no progress. */
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
  };
}

/**
 * The fields commands own (POST /archive/configure, /init, /run, and the storage limit at
 * start); the pass owns the rest (progress). Each side writes only its own fields with
 * ArchiveStateStore.update (a `$set` of those fields), so a command answered by any worker and a
 * pass running on the lease holder never undo each other's changes.
 */
export type CommandFields = Pick<ArchiveState, 'settings' | 'initialised_at' | 'run_requested_at'>;
export type PassFields = Omit<ArchiveState, keyof CommandFields>;

/** `progress` with the command fields of `stored` (what commands wrote meanwhile). */
export function withCommandFields(progress: ArchiveState, stored: ArchiveState): ArchiveState {
  return {
    ...progress,
    settings: stored.settings,
    initialised_at: stored.initialised_at,
    run_requested_at: stored.run_requested_at,
  };
}

export const DAY_MS = 86_400_000;
