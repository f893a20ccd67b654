import type { ArchiveState } from '@screenfleet/contracts';

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
