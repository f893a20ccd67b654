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
/** After reads in progress outlasted that wait, the next try waits this long. */
const DRAIN_BACKOFF_MS = 10_000;
/** How long, once no read is open, it waits for the writer to start the WAL over. */
const RESTART_WAIT_MS = 500;

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
 * started the WAL over (at most 0.5 s more). docs/adr/0011.
 */
export async function startSqliteCheckpointer(
  file: string,
  options: { busyTimeoutMs: number; readers: SqliteReaders; maxWalPages?: number },
): Promise<SqliteCheckpointer> {
  const { readers, maxWalPages = DEFAULT_MAX_WAL_PAGES } = options;
  const db = new AsyncDatabase(file);
  await db.exec(`PRAGMA busy_timeout = ${options.busyTimeoutMs}; PRAGMA synchronous = FULL;`);
  const checkpoint = await db.prepare('PRAGMA wal_checkpoint(PASSIVE)');
  let running: Promise<void> | undefined;
  let last = 0;
  let drainAfter = 0;
  let closed = false;
  const committed = createBoundedSignal();

  /** Copies what no read needs; resolves with the WAL's length in pages. */
  async function copy(): Promise<number> {
    const [row] = (await checkpoint.all()) as Array<{ log: number }>;
    return row?.log ?? 0;
  }

  /** With no read open: copies everything and waits for the writer to start the WAL over. */
  async function startOver(): Promise<void> {
    const until = performance.now() + RESTART_WAIT_MS;
    while (!closed && (await copy()) >= maxWalPages && performance.now() < until) {
      await committed.wait(until - performance.now());
    }
  }

  async function pass(): Promise<void> {
    if ((await copy()) < maxWalPages || closed || performance.now() < drainAfter) return;
    const drained = await readers.withoutReads(startOver, DRAIN_WAIT_MS);
    if (!drained) drainAfter = performance.now() + DRAIN_BACKOFF_MS;
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
