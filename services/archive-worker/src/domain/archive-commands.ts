import {
  ConflictError,
  initialArchiveState,
  type ArchiveConfigureRequest,
  type ArchiveInitRequest,
  type ArchiveSettings,
  type ArchiveState,
} from '@screenfleet/contracts';
import type { ArchiveStateStore } from '@screenfleet/storage';
import type { CommandFields } from './archive-state';

export interface CommandDeps {
  state: Pick<ArchiveStateStore, 'load' | 'update'>;
  defaults: ArchiveSettings;
  now: () => Date;
}

/**
 * The commands any worker may answer (the lease holder or not). Each reads the stored state and
 * writes only the fields commands own (settings, initialised_at, run_requested_at) with an
 * atomic `$set`; the pass on the lease holder writes only its own, so neither undoes the other.
 */
export function createArchiveCommands({ state, defaults, now }: CommandDeps) {
  const load = () => state.load(initialArchiveState(defaults, now()));
  async function change(
    fieldsFrom: (current: ArchiveState) => Partial<CommandFields>,
  ): Promise<ArchiveState> {
    const current = await load();
    const fields = fieldsFrom(current);
    await state.update(fields);
    return { ...current, ...fields };
  }

  return {
    load,
    configure: (request: ArchiveConfigureRequest) =>
      change((current) => ({
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
    requestRun: () => change(() => ({ run_requested_at: now() })),
    /** The environment's storage limit applies from every start (no route changes it). */
    applyStorageLimit: (limit: number) =>
      change((current) => ({
        settings: { ...current.settings, storage_limit: limit },
      })),
  };
}

export type ArchiveCommands = ReturnType<typeof createArchiveCommands>;
