import { backoffDelay, type BackoffOptions, type Logger } from '@screenfleet/runtime';
import type { ArchiveStateStore } from '@screenfleet/storage';
import type { Archiver, PassReport } from '../domain/archive-pass';
import { taskHolder } from '../domain/archive-task';
import type { ArchiveCommands } from '../domain/archive-commands';
import type { AuditRetention } from '../domain/audit-retention';
import type { ArchiveMetrics } from '../metrics';

export interface ArchiveLoopDeps {
  archiver: Archiver;
  commands: ArchiveCommands;
  leases: Pick<ArchiveStateStore, 'acquireLease' | 'releaseLease' | 'leaseHolder'>;
  holderId: string;
  leaseTtlMs: number;
  intervalMs: number;
  retry: BackoffOptions;
  logger: Logger;
  metrics: ArchiveMetrics;
  now: () => Date;
  /** Deletes expired audit rows while this worker holds the lease; absent: none. */
  auditRetention?: Pick<AuditRetention, 'runIfDue'>;
}

/**
 * Every lease_ttl/3 each worker tries to take or renew the lease; only the holder runs passes
 * (every interval, after a failure with a doubling backoff, or at once when a run was asked for,
 * here or on another worker through the state). During a pass the holder renews the lease every
 * lease_ttl/3 too (a slow chunk must not let it expire), and again before each chunk, before it
 * records a chunk and before it deletes items; the pass stops when the lease is lost.
 *
 * The holder also deletes expired audit rows when due (domain/audit-retention.ts), before the
 * reconcile and whether or not archiving is enabled; it needs no `task` lease (a restore or
 * rekey never touches audit rows).
 *
 * A pass (and the reconcile on taking the lease) also holds the `task` lease, which restores and
 * rekeys take too, from any process: a pass due while one runs waits for the next tick (outcome
 * `busy`), and a restore asked during a pass is refused.
 */
export function createArchiveLoop(deps: ArchiveLoopDeps) {
  const { archiver, leases, holderId, leaseTtlMs, logger, metrics, now } = deps;
  const task = taskHolder('pass', holderId);
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;
  let stopping = false;
  let holds = false;
  /** The task lease is this worker's: during a pass or a reconcile. */
  let holdsTask = false;
  let nextPassAt = 0;
  let runAsked = false;
  /** A manual run found the archive busy: the next tick runs it. */
  let manualWaiting = false;
  let lastRunSeen = 0;

  let renewing: Promise<boolean> | undefined;
  /** storage_used was reconciled since this worker last took the lease. */
  let reconciled = false;

  /**
   * One renewal at a time: two concurrent acquireLease calls by the same holder race for the
   * same next term, and the loser would read as a lost lease.
   */
  function renewLease(): Promise<boolean> {
    renewing ??= (async () => {
      const held = await leases.acquireLease(holderId, leaseTtlMs, now()).catch(() => false);
      if (held !== holds)
        logger.info({ holderId, held }, held ? 'archive lease taken' : 'archive lease lost');
      holds = held;
      if (!held) reconciled = false; // another worker may have written meanwhile
      metrics.leaseHeld.set(held ? 1 : 0);
      // While a task runs, its lease too: a restore may take it once it has expired.
      if (held && holdsTask) {
        holdsTask = await leases.acquireLease(task, leaseTtlMs, now(), 'task').catch(() => false);
        if (!holdsTask) logger.warn({ holderId }, 'archive task lease lost during a pass');
        return holdsTask;
      }
      return held;
    })().finally(() => (renewing = undefined));
    return renewing;
  }

  /**
   * Runs `work` holding the task lease; undefined, without running it, when a restore or rekey
   * holds it (logged once per wait).
   */
  async function asTask<T>(work: () => Promise<T>): Promise<T | undefined> {
    holdsTask = await leases.acquireLease(task, leaseTtlMs, now(), 'task').catch(() => false);
    if (!holdsTask) {
      const holder = await leases.leaseHolder(now(), 'task').catch(() => null);
      logger.info({ holder }, 'archive pass waits: another task holds the archive');
      return undefined;
    }
    try {
      return await work();
    } finally {
      holdsTask = false;
      // A renewal in flight may be taking the task lease again: give it up after that renewal
      // (and undo what it set), or the lease would outlive the task and refuse restores.
      await renewing?.catch(() => undefined);
      holdsTask = false;
      await leases.releaseLease(task, 'task').catch(() => undefined);
    }
  }

  async function renew(): Promise<boolean> {
    if (stopping) return false;
    return renewLease();
  }

  async function pass(manual: boolean): Promise<PassReport> {
    const report = await asTask(() => {
      const stopTimer = metrics.passDuration.startTimer();
      // Renewed on a timer while the pass runs: a chunk slower than the lease does not let it go.
      const renewal = setInterval(() => void renewLease(), Math.ceil(leaseTtlMs / 3));
      return archiver
        .runPass({ manual })
        .finally(() => clearInterval(renewal))
        .finally(() => stopTimer());
    });
    if (!report) {
      metrics.passes.inc({ outcome: 'busy' });
      return { outcome: 'busy', chunks: 0, items: 0, mediaFiles: 0, failures: 0 };
    }
    metrics.passes.inc({ outcome: report.outcome });
    if (report.outcome === 'done') metrics.lastSuccess.set(now().getTime() / 1000);
    if (report.outcome === 'failed') {
      logger.warn({ failures: report.failures, error: report.error }, 'archive pass failed');
    } else if (report.chunks > 0 || report.outcome !== 'done') {
      logger.info({ ...report }, 'archive pass ended');
    }
    return report;
  }

  /** What a pass of a disabled archive reports, without running (or holding the archive). */
  function disabledPass(): PassReport {
    metrics.passes.inc({ outcome: 'disabled' });
    return { outcome: 'disabled', chunks: 0, items: 0, mediaFiles: 0, failures: 0 };
  }

  /**
   * On taking the lease: the sweep of crash leftovers, and storage_used from what the store
   * holds. Until it succeeds no pass runs (the storage limit is judged by it), and it is tried
   * again at every tick.
   */
  async function reconcile(): Promise<boolean> {
    try {
      const result = await asTask(() => archiver.takeOver());
      if (!result) {
        metrics.passes.inc({ outcome: 'busy' }); // no pass before it
        return false;
      }
      const { before, after, sweep } = result;
      if (sweep.orphans.count > 0 || sweep.unfinished.count > 0) {
        logger.info(
          { orphans: sweep.orphans, unfinished: sweep.unfinished },
          'archive sweep: removed what crashes left',
        );
      }
      for (const kept of sweep.kept) logger.warn(kept, 'archive sweep: item set left as it is');
      if (before !== after) logger.info({ before, after }, 'archive storage_used reconciled');
      return true;
    } catch (error) {
      logger.warn({ err: error }, 'archive storage_used not reconciled; no pass until it is');
      return false;
    }
  }

  /** Its own failure is logged and leaves the pass alone; it is due again at the next tick. */
  async function expireAudit(): Promise<void> {
    if (!deps.auditRetention) return;
    try {
      const deleted = await deps.auditRetention.runIfDue(renew);
      if (deleted) logger.info({ deleted }, 'audit rows past the retention deleted');
    } catch (error) {
      logger.warn({ err: error }, 'audit retention failed; tried again at the next tick');
    }
  }

  async function tick(): Promise<void> {
    try {
      if (!(await renew())) return;
      await expireAudit();
      reconciled ||= await reconcile();
      if (!reconciled) return;
      const state = await deps.commands.load();
      const requested = state.run_requested_at?.getTime() ?? 0;
      const manual = runAsked || manualWaiting || requested > lastRunSeen;
      lastRunSeen = Math.max(lastRunSeen, requested);
      if (!manual && now().getTime() < nextPassAt) return;
      runAsked = false;
      // Disabled: nothing to do, and no reason to hold the archive a restore may want.
      const report = state.settings.enabled ? await pass(manual) : disabledPass();
      // Busy: the next tick (lease_ttl/3 later, not at once) tries again.
      manualWaiting = report.outcome === 'busy' && manual;
      if (report.outcome === 'busy') return;
      nextPassAt =
        now().getTime() +
        (report.outcome === 'failed' ? backoffDelay(deps.retry, report.failures) : deps.intervalMs);
    } catch (error) {
      // The state store is down: try again at the next tick; the lease expires meanwhile if so.
      logger.warn({ err: error }, 'archive loop tick failed');
    }
  }

  function schedule(): void {
    if (stopping) return;
    const untilPass = Math.max(0, nextPassAt - now().getTime());
    const delay = runAsked ? 0 : Math.min(Math.ceil(leaseTtlMs / 3), untilPass);
    timer = setTimeout(() => {
      timer = undefined;
      running = tick().finally(() => {
        running = undefined;
        schedule();
      });
    }, delay);
  }

  return {
    start(): void {
      schedule();
    },
    /** A run asked on this worker: at once when it holds the lease (a tick starts now). */
    runNow(): void {
      runAsked = true;
      if (timer && !running) {
        clearTimeout(timer);
        timer = undefined;
        schedule();
      }
    },
    /** Asked before each chunk: false once stopping or the lease is gone. */
    mayContinue: renew,
    /** Asked before a chunk is recorded and before items are deleted: renews, even when stopping. */
    confirmLease: renewLease,
    /** Lets the chunk in hand finish (the pass stops before the next), then gives the lease up. */
    async stop(): Promise<void> {
      stopping = true;
      if (timer) clearTimeout(timer);
      await running;
      if (holds) await leases.releaseLease(holderId).catch(() => undefined);
      holds = false;
      metrics.leaseHeld.set(0);
    },
  };
}

export type ArchiveLoop = ReturnType<typeof createArchiveLoop>;
