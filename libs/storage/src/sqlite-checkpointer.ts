import AsyncDatabase from 'libsql/promise';
import { createBoundedSignal } from './bounded-signal';
import type { SqliteReaders } from './sqlite-readers';

/** Checkpoints at most this often (a kick within it waits for the next commit). */
const MIN_INTERVAL_MS = 100;
/**
 * The WAL's length (pages) past which the checkpointer gets it started over: 16 MiB of 4 KiB
 * pages, so that what accumulates while a long read ends stays under the writer's own
 * checkpoint at 10,000 pages (a commit that runs it takes ~90 ms on the 1M-item file).
 */
export const DEFAULT_MAX_WAL_PAGES = 4096;
/** How long new reads are held, at most, waiting for the reads in progress to end. */
const DRAIN_WAIT_MS = 1000;
/** How long, once no read is open, it waits for the writer to start the WAL over. */
const RESTART_WAIT_MS = 500;
/** After a pass that did not get the WAL started over, the next one waits this long. */
const DRAIN_BACKOFF_MS = 10_000;

/**
 * How a pass that held new reads ended: the WAL started over, or it did not within
 * RESTART_WAIT_MS (the writer never paused between transactions, or a connection outside the
 * readers pins the WAL), or the reads in progress outlasted DRAIN_WAIT_MS.
 */
export type CheckpointPassOutcome = 'restarted' | 'not_restarted' | 'reads_outlasted';

export interface SqliteCheckpointerOptions {
  busyTimeoutMs: number;
  readers: SqliteReaders;
  maxWalPages?: number;
  /** How long after a pass that did not start the WAL over no read is held (default 10 s). */
  drainBackoffMs?: number;
  /** Told how each pass that held new reads ended (tests, metrics). */
  onPass?: (outcome: CheckpointPassOutcome) => void;
}

export interface SqliteCheckpointer {
  /** After a commit: copies the WAL into the database file unless a copy runs or just ran. */
  kick(): void;
  close(): Promise<void>;
}

/**
 * Copies the WAL back into the database file beside the writer, on a connection of its own whose
 * statements run on libsql's threads. Left to SQLite, the writer's own commit would do it each
 * time the WAL passes 1,000 pages, with an fsync of the database file; on a big file (an insert
 * dirties pages all over the id index and FTS5 merges segments: 10-40 KB of WAL an item) that
 * was most of a commit's time. PASSIVE: it waits for neither readers nor the writer and copies
 * what no reader still needs; the next write starts the WAL over once all is copied (below).
 * The writer keeps an autocheckpoint of its own at 10,000 pages, should this ever fall behind.
 *
 * The writer may start the WAL over only at the start of a write, when every page is copied and
 * no read uses the WAL, and under load neither happens by itself: the writer begins its next
 * transaction while this still copies the last, and reads that overlap without a gap (searches
 * back to back) pin it for good (SQLite's "checkpoint starvation": 400 MB in 12 s). So past
 * `maxWalPages` pages it makes the gap: it holds new reads (at most 1 s) until the reads in
 * progress end, copies everything after each commit, and lets reads go once a commit has
 * started the WAL over (at most 0.5 s more). A pass that did not get it started over holds no
 * read again for `drainBackoffMs`: under writes that never pause, every pass would fail alike
 * and hold the reads each time. docs/adr/0011.
 */
export async function startSqliteCheckpointer(
  file: string,
  options: SqliteCheckpointerOptions,
): Promise<SqliteCheckpointer> {
  const {
    readers,
    maxWalPages = DEFAULT_MAX_WAL_PAGES,
    drainBackoffMs = DRAIN_BACKOFF_MS,
    onPass,
  } = options;
  const db = new AsyncDatabase(file);
  await db.exec(`PRAGMA busy_timeout = ${options.busyTimeoutMs}; PRAGMA synchronous = FULL;`);
  const checkpoint = await db.prepare('PRAGMA wal_checkpoint(PASSIVE)');
  let running: Promise<void> | undefined;
  let last = 0;
  let drainAfter = 0;
  let closed = false;
  const committed = createBoundedSignal();

  /**
   * Copies what no read needs; resolves with the WAL's length in pages. While another checkpoint
   * runs (the writer's own, past 10,000 pages) SQLite answers busy with a length of -1: that is
   * no WAL started over, so Infinity.
   */
  async function copy(): Promise<number> {
    const [row] = (await checkpoint.all()) as Array<{ busy: number; log: number }>;
    return row?.busy ? Infinity : (row?.log ?? 0);
  }

  /**
   * With no read open: copies everything and waits for the writer to start the WAL over;
   * resolves whether it did.
   */
  async function startOver(): Promise<boolean> {
    const until = performance.now() + RESTART_WAIT_MS;
    while ((await copy()) >= maxWalPages) {
      if (closed || performance.now() >= until) return false;
      await committed.wait(until - performance.now());
    }
    return true;
  }

  async function pass(): Promise<void> {
    if ((await copy()) < maxWalPages || closed || performance.now() < drainAfter) return;
    let restarted = false;
    const drained = await readers.withoutReads(async () => {
      restarted = await startOver();
    }, DRAIN_WAIT_MS);
    const outcome = !drained ? 'reads_outlasted' : restarted ? 'restarted' : 'not_restarted';
    // Held reads bought nothing; holding them again at the next commit would buy the same.
    if (outcome !== 'restarted') drainAfter = performance.now() + drainBackoffMs;
    onPass?.(outcome);
  }

  return {
    kick() {
      committed.notify();
      if (closed || running || performance.now() - last < MIN_INTERVAL_MS) return;
      running = pass()
        // Best effort: what it leaves, the next one or the writer's autocheckpoint copies.
        .catch(() => undefined)
        .finally(() => {
          running = undefined;
          last = performance.now();
        });
    },
    async close() {
      closed = true;
      committed.notify();
      await running;
      db.close();
    },
  };
}
