import {
  ConflictError,
  type ArchiveConfigureRequest,
  type ArchiveInitRequest,
} from '@screenfleet/contracts';
import type { ArchiveSettings, ArchiveState, ArchiveStateStore } from '@screenfleet/storage';
import { initialArchiveState } from './archive-state';

export interface CommandDeps {
  state: Pick<ArchiveStateStore, 'load' | 'save'>;
  defaults: ArchiveSettings;
  now: () => Date;
}

/**
 * The commands any worker may answer (the lease holder or not). Each reads the stored state,
 * changes only the fields commands own (settings, initialised_at, run_requested_at) and saves;
 * the pass on the lease holder keeps these fields when it records its progress.
 */
export function createArchiveCommands({ state, defaults, now }: CommandDeps) {
  const load = () => state.load(initialArchiveState(defaults, now()));
  async function change(mutate: (current: ArchiveState) => ArchiveState): Promise<ArchiveState> {
    const next = mutate(await load());
    await state.save(next);
    return next;
  }

  return {
    load,
    configure: (request: ArchiveConfigureRequest) =>
      change((current) => ({
        ...current,
        settings: {
          ...current.settings,
          ...(request.enabled !== undefined ? { enabled: request.enabled } : {}),
          ...(request.retention_days !== undefined
            ? { retention_days: request.retention_days }
            : {}),
        },
      })),
    /** screenpipe's desktop app turns the archive on with this; a second call is a conflict. */
    async init(request: ArchiveInitRequest): Promise<ArchiveState> {
      const current = await load();
      if (current.initialised_at) {
        throw new ConflictError(
          `the archive is already initialised (since ${current.initialised_at.toISOString()}); use POST /archive/configure to change it`,
        );
      }
      return change((latest) => ({
        ...latest,
        initialised_at: now(),
        run_requested_at: now(),
        settings: {
          ...latest.settings,
          enabled: true,
          retention_days: request.retention_days ?? latest.settings.retention_days,
        },
      }));
    },
    /** Recorded in the state, so the lease holder runs at once whichever worker got the call. */
    requestRun: () => change((current) => ({ ...current, run_requested_at: now() })),
    /** The environment's storage limit applies from every start (no route changes it). */
    applyStorageLimit: (limit: number) =>
      change((current) => ({
        ...current,
        settings: { ...current.settings, storage_limit: limit },
      })),
  };
}

export type ArchiveCommands = ReturnType<typeof createArchiveCommands>;
