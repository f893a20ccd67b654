import { randomUUID } from 'node:crypto';
import { ConflictError } from '@screenfleet/contracts';
import type { ArchiveStateStore } from '@screenfleet/storage';

/**
 * What works on the archived objects: one at a time across every process on the store, held by
 * the state store's `task` lease (ArchiveLeaseName). A pass would finish its chunk and delete
 * items a restore had just put back; a rekey replaces objects a restore or a pass reads; a
 * restore beside a delete could put back what the delete has not yet recorded as deleted.
 */
export type ArchiveTask = 'pass' | 'restore' | 'rekey' | 'check' | 'delete';

const described: Record<ArchiveTask, string> = {
  pass: 'an archive pass',
  restore: 'a restore',
  rekey: 'a rekey',
  check: "a worker's start check of the keys",
  delete: 'a delete of captured data',
};

/**
 * The task lease's holder: what runs, and who runs it. Unique per run (two restores answered by
 * one worker must not both hold it as "the same" holder), except a worker's passes, which one
 * loop runs one after the other.
 */
export function taskHolder(task: ArchiveTask, by: string): string {
  return task === 'pass' ? `pass ${by}` : `${task} ${by}#${randomUUID().slice(0, 8)}`;
}

export interface TaskLeaseDeps {
  leases: Pick<ArchiveStateStore, 'acquireLease' | 'releaseLease' | 'leaseHolder'>;
  ttlMs: number;
  now: () => Date;
}

/** The refusal when the task lease is taken: it says what runs and what to do. */
export async function archiveBusy(deps: TaskLeaseDeps): Promise<ConflictError> {
  const holder = await deps.leases.leaseHolder(deps.now(), 'task').catch(() => null);
  const [task, ...by] = (holder ?? '').split(' ');
  const what = described[task as ArchiveTask] ?? 'another task';
  return new ConflictError(
    `the archive is busy with ${what}${by.length > 0 ? ` (${by.join(' ')})` : ''}; try again once it has ended ` +
      '(a pass stops before its next chunk once the archive is disabled; a task whose process died ' +
      'holds the archive until its lease expires, ARCHIVE_LEASE_TTL)',
  );
}

/** Says, at any time while the work runs, whether the task lease is still this run's. */
export interface HeldTask {
  stillHeld: () => boolean;
}

/**
 * How long a restore or a rekey waits for the task lease before it is refused: long enough for
 * what holds it briefly (a worker's reconcile on taking the lease, the end of a chunk), short
 * enough to answer well within the gateway's restore timeout.
 */
export const TASK_WAIT_MS = 5000;
const RETRY_MS = 250;

/**
 * Runs `work` holding the task lease as `holder`, once it is free (waiting up to `waitMs`):
 * refused with a ConflictError naming what runs when another still holds it. The lease is
 * renewed every ttl/3 while the work runs (a renewal that finds it taken marks it lost: the
 * work should stop at its next step) and given up afterwards.
 */
export async function withTaskLease<T>(
  deps: TaskLeaseDeps,
  holder: string,
  work: (task: HeldTask) => Promise<T>,
  waitMs = TASK_WAIT_MS,
): Promise<T> {
  const { leases, ttlMs, now } = deps;
  const giveUpAt = Date.now() + waitMs;
  while (!(await leases.acquireLease(holder, ttlMs, now(), 'task'))) {
    if (Date.now() >= giveUpAt) throw await archiveBusy(deps);
    await new Promise((resolve) => setTimeout(resolve, RETRY_MS));
  }
  let held = true;
  // A failed renewal (the store unreachable) is not a loss yet: the next one may still be in time.
  const renewal = setInterval(
    () => {
      leases.acquireLease(holder, ttlMs, now(), 'task').then(
        (renewed) => void (held &&= renewed),
        () => undefined,
      );
    },
    Math.ceil(ttlMs / 3),
  );
  try {
    return await work({ stillHeld: () => held });
  } finally {
    clearInterval(renewal);
    await leases.releaseLease(holder, 'task').catch(() => undefined);
  }
}
