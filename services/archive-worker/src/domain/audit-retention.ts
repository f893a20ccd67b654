import type { AuditStore } from '@screenfleet/storage';

const DAY_MS = 86_400_000;

/**
 * Rows per delete: each is one short write (one writer operation in the embedded mode), so
 * captures and new audit rows keep being written between the chunks of a large backlog.
 */
export const AUDIT_DELETE_CHUNK_ROWS = 1000;

/**
 * How often the lease holder deletes expired rows. Rows expire by days, so an hour late costs
 * nothing, and a query a pass interval (minutes) would mostly find nothing to delete.
 */
export const AUDIT_RETENTION_EVERY_MS = 3_600_000;

/** Where deletions are reported (the worker counts them in a metric). */
export interface AuditRetentionObserver {
  rowsDeleted(count: number): void;
}

export interface AuditRetentionDeps {
  audit: Pick<AuditStore, 'deleteOlderThan'>;
  /** Rows older than this many days are deleted (AUDIT_RETENTION_DAYS). */
  retentionDays: number;
  now: () => Date;
  chunkRows?: number;
  everyMs?: number;
  observer?: AuditRetentionObserver;
}

/** Rows before this time are expired: a row exactly `retentionDays` old stays. */
export function auditCutoff(now: Date, retentionDays: number): Date {
  return new Date(now.getTime() - retentionDays * DAY_MS);
}

/**
 * Deletes the rows before `cutoff`, a chunk at a time, until a chunk comes back short (none
 * left), or `mayContinue` says stop (the worker stops, or lost the lease) before a chunk.
 * `complete`: no expired row was left at the last delete.
 */
export async function deleteExpiredAudit(
  audit: Pick<AuditStore, 'deleteOlderThan'>,
  cutoff: Date,
  options: {
    chunkRows: number;
    mayContinue: () => Promise<boolean>;
    observer?: AuditRetentionObserver;
  },
): Promise<{ deleted: number; complete: boolean }> {
  let deleted = 0;
  for (;;) {
    if (!(await options.mayContinue())) return { deleted, complete: false };
    const count = await audit.deleteOlderThan(cutoff, { limit: options.chunkRows });
    deleted += count;
    if (count > 0) options.observer?.rowsDeleted(count);
    if (count < options.chunkRows) return { deleted, complete: true };
  }
}

/**
 * The audit retention (docs/adr/0019): the archive lease holder deletes rows older than the
 * retention at most once every `everyMs`. It runs whether or not archiving is enabled (the
 * archive is opt-in; keeping audit rows for ever is not). A run cut short or failed is due
 * again at the next call: the rows it left are still expired.
 */
export function createAuditRetention(deps: AuditRetentionDeps) {
  const chunkRows = deps.chunkRows ?? AUDIT_DELETE_CHUNK_ROWS;
  const everyMs = deps.everyMs ?? AUDIT_RETENTION_EVERY_MS;
  let nextAt = 0;
  return {
    /** Deletes the expired rows when due; the count deleted, or undefined when not due. */
    async runIfDue(mayContinue: () => Promise<boolean>): Promise<number | undefined> {
      const started = deps.now();
      if (started.getTime() < nextAt) return undefined;
      const { deleted, complete } = await deleteExpiredAudit(
        deps.audit,
        auditCutoff(started, deps.retentionDays),
        { chunkRows, mayContinue, ...(deps.observer ? { observer: deps.observer } : {}) },
      );
      if (complete) nextAt = started.getTime() + everyMs;
      return deleted;
    },
  };
}

export type AuditRetention = ReturnType<typeof createAuditRetention>;
