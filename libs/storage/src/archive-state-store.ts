import type { ArchiveState } from '@screenfleet/contracts';

/** Who may work: one archive worker at a time holds the lease until it expires. */
export interface ArchiveLease {
  holder: string;
  expires_at: Date;
}

/**
 * The archive's persisted state and the lease that keeps a single worker active. Errors meaning
 * the server cannot be reached reject with StoreUnavailableError (retry with backoff).
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
   * Takes or renews the lease for `holder` until now + ttlMs. True when `holder` holds it
   * afterwards: it was free, expired, or already `holder`'s. Atomic across workers.
   */
  acquireLease(holder: string, ttlMs: number, now: Date): Promise<boolean>;
  /** Gives the lease up when `holder` holds it, so another worker can take over at once. */
  releaseLease(holder: string): Promise<void>;
  close(): Promise<void>;
}
