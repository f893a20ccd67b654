import { statSync } from 'node:fs';
import { Counter, Gauge, type Registry } from '@screenfleet/runtime';
import type { CheckpointPassOutcome, SqliteDatabase } from '@screenfleet/storage';

/**
 * The checkpointer's passes by outcome: its `onPass` is given where the file is opened, the
 * counts are read at scrape time (registerSqliteMetrics).
 */
export function checkpointPasses() {
  // Every outcome, or this fails to compile: a type-only import keeps SQLite out of the
  // processes that open no store.
  const counts: Record<CheckpointPassOutcome, number> = {
    restarted: 0,
    not_restarted: 0,
    reads_outlasted: 0,
  };
  return { counts, onPass: (outcome: CheckpointPassOutcome) => (counts[outcome] += 1) };
}

/** A counter whose value is read at scrape time from what the database counts itself. */
function countedBy(read: () => number): (this: Counter) => void {
  return function collect() {
    this.reset();
    this.inc(read());
  };
}

/**
 * The embedded store's own figures (docs/adr/0011): its writer's transactions and slow commits,
 * the WAL's size, the reads the checkpointer held and its passes. Read at scrape time.
 */
export function registerSqliteMetrics(
  registry: Registry,
  database: SqliteDatabase,
  passes: ReturnType<typeof checkpointPasses>,
): void {
  const registers = [registry];
  new Counter({
    name: 'sqlite_transactions_total',
    help: 'Transactions of the SQLite writer thread (each commits a group of writes)',
    registers,
    collect: countedBy(() => database.writer.stats().transactions),
  });
  new Counter({
    name: 'sqlite_slow_commits_total',
    help: 'Commits of the SQLite writer whose COMMIT took over 30 ms (its fsync, or a checkpoint SQLite ran in it)',
    registers,
    collect: countedBy(() => database.writer.stats().slowCommits),
  });
  new Counter({
    name: 'sqlite_reads_held_total',
    help: 'Reads the checkpointer held while it got the WAL started over',
    registers,
    collect: countedBy(() => database.readers.stats().held),
  });
  new Counter({
    name: 'sqlite_checkpoint_passes_total',
    help: 'Passes of the checkpointer that held new reads, by outcome (restarted: every page copied with no read open)',
    labelNames: ['outcome'] as const,
    registers,
    collect() {
      this.reset();
      for (const [outcome, n] of Object.entries(passes.counts)) this.inc({ outcome }, n);
    },
  });
  new Gauge({
    name: 'sqlite_wal_bytes',
    help: "The size of the SQLite file's WAL (it grows until the checkpointer gets it started over)",
    registers,
    collect() {
      try {
        this.set(statSync(`${database.file}-wal`).size);
      } catch {
        this.set(0); // none: the file is closed, or was never written
      }
    },
  });
}
