import type { ArchiveState } from '@screenfleet/contracts';

/** Who may work: one archive worker at a time holds the lease until it expires. */
export interface ArchiveLease {
  holder: string;
  expires_at: Date;
}

/**
 * The two leases, each with one holder at a time across every process on the store:
 * - `worker`: which archive worker runs passes; it holds it for as long as it lives.
 * - `task`: what works on the archived objects right now (a pass, a restore, a rekey), held only
 *   while it runs, so that none of them overlaps another: a restore never races a pass that
 *   would delete what it puts back.
 */
export type ArchiveLeaseName = 'worker' | 'task';

/**
 * The archive's persisted state and the leases that keep a single worker, and a single task,
 * active. Errors meaning the server cannot be reached reject with StoreUnavailableError (retry
 * with backoff).
 */
export interface ArchiveStateStore {
  /** The stored state, or `initial` stored and returned when there is none yet. */
  load(initial: ArchiveState): Promise<ArchiveState>;
  save(state: ArchiveState): Promise<void>;
  /**
   * Sets only the given top-level fields of the stored state, all at once (a crash leaves all or
   * none of them written), leaving every other field as it is: the pass and the commands each
   * write their own fields, so one never undoes a change the other made meanwhile. Undefined
   * values are skipped. The state must have been stored (load stores the initial one); rejects
   * otherwise.
   */
  update(fields: Partial<ArchiveState>): Promise<void>;
  /**
   * Takes or renews `lease` (default `worker`) for `holder` until now + ttlMs. True when
   * `holder` holds it afterwards: it was free, expired, or already `holder`'s. Atomic across
   * workers. The two leases are independent of each other.
   */
  acquireLease(
    holder: string,
    ttlMs: number,
    now: Date,
    lease?: ArchiveLeaseName,
  ): Promise<boolean>;
  /** Gives `lease` up when `holder` holds it, so another can take it at once. */
  releaseLease(holder: string, lease?: ArchiveLeaseName): Promise<void>;
  /** Who holds `lease` at `now` (not expired), or null: for saying who keeps a task waiting. */
  leaseHolder(now: Date, lease?: ArchiveLeaseName): Promise<string | null>;
  close(): Promise<void>;
}
