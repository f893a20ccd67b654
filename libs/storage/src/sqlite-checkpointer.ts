import AsyncDatabase from 'libsql/promise';
import type { SqliteReaders } from './sqlite-readers';
import type { SqliteWriter } from './sqlite-writer';

/** Checkpoints at most this often (a kick within it waits for the next commit). */
const MIN_INTERVAL_MS = 100;
/**
 * The WAL's length (pages) past which the checkpointer gets it started over: 16 MiB of 4 KiB
 * pages, so that what accumulates while a long read ends stays well under the writer's own
 * checkpoint (32,768 pages; a commit that runs it takes 90 ms and more on the 1M-item file).
 */
export const DEFAULT_MAX_WAL_PAGES = 4096;
/**
 * How long new reads are held, at most, waiting for the reads in progress to end: longer than
 * a relevance search over a million items takes on a slow day (p95 1.7 s), so that one search
 * in progress does not make the pass fail.
 */
const DRAIN_WAIT_MS = 2000;
/**
 * With the reads held, copies beside the writer go on (at most this many) until one finds fewer
 * than SHORT_COPY_PAGES committed since the last (2 MiB: about one group's).
 */
const MAX_COPIES_BESIDE = 8;
const SHORT_COPY_PAGES = 512;
/** After a pass whose reads outlasted DRAIN_WAIT_MS, the next one waits this long. */
const OUTLASTED_BACKOFF_MS = 1000;
/** After a pass that did not get everything copied, the next one waits this long. */
const DRAIN_BACKOFF_MS = 10_000;

/**
 * How a pass that held new reads ended: everything copied with no read open (the writer's next
 * transaction starts the WAL over), or not (a connection outside the readers pins the WAL), or
 * the reads in progress outlasted DRAIN_WAIT_MS.
 */
export type CheckpointPassOutcome = 'restarted' | 'not_restarted' | 'reads_outlasted';

export interface SqliteCheckpointerOptions {
  busyTimeoutMs: number;
  readers: SqliteReaders;
  /** Copies the rest between two of its transactions (the pass's last step). */
  writer: Pick<SqliteWriter, 'copyWal'>;
  maxWalPages?: number;
  /** How long after a pass that did not copy everything no read is held (default 10 s). */
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
 * what no reader still needs. The writer keeps an autocheckpoint of its own at 32,768 pages,
 * should this ever fall behind.
 *
 * The writer may start the WAL over only at the start of a transaction, when every page is
 * copied and no read uses the WAL, and under load neither happens by itself: the writer begins
 * its next transaction while this still copies the last, and reads that overlap without a gap
 * (searches back to back) pin it for good (SQLite's "checkpoint starvation": 400 MB in 12 s).
 * So past `maxWalPages` pages it makes the gap: it holds new reads (at most 2 s, each to its
 * deadline) until the reads in progress end, copies what it can beside the writer, then has the
 * writer thread copy the rest between two of its transactions (so nothing is being written):
 * with every page copied and no read open, the writer's next transaction starts the WAL over,
 * and the held reads go at once (a read that starts now reads the database file, not the WAL).
 * A pass that did not copy everything (a connection outside the readers pins the WAL) holds no
 * read again for `drainBackoffMs`; one whose reads outlasted the wait, for 1 s. docs/adr/0011.
 */
export async function startSqliteCheckpointer(
  file: string,
  options: SqliteCheckpointerOptions,
): Promise<SqliteCheckpointer> {
  const {
    readers,
    writer,
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

  /**
   * Copies what no read needs; resolves with the WAL's length in pages. While another checkpoint
   * runs (the writer's own, past 32,768 pages) SQLite answers busy with a length of -1: that is
   * no WAL started over, so Infinity.
   */
  async function copy(): Promise<number> {
    const [row] = (await checkpoint.all()) as Array<{ busy: number; log: number }>;
    return row?.busy ? Infinity : (row?.log ?? 0);
  }

  /** With no read open: whether every page got copied (so the next transaction starts over). */
  async function copyEverything(): Promise<boolean> {
    // The bulk beside the writer (what the reads pinned, then what was committed meanwhile)
    // until what a copy found new is short, so that the writer's own copy (the writes wait for
    // it) holds about one commit's pages.
    let pages = await copy();
    for (let copies = 1; copies < MAX_COPIES_BESIDE && !closed; copies++) {
      const before = pages;
      pages = await copy();
      if (pages - before < SHORT_COPY_PAGES) break;
    }
    if (closed) return false;
    const rest = await writer.copyWal();
    return !rest.busy && rest.copied === rest.pages;
  }

  async function pass(): Promise<void> {
    if ((await copy()) < maxWalPages || closed || performance.now() < drainAfter) return;
    let copied = false;
    const drained = await readers.withoutReads(async () => {
      copied = await copyEverything();
    }, DRAIN_WAIT_MS);
    const outcome = !drained ? 'reads_outlasted' : copied ? 'restarted' : 'not_restarted';
    // Held reads bought nothing; holding them again at the next commit would buy the same.
    if (outcome === 'not_restarted') drainAfter = performance.now() + drainBackoffMs;
    if (outcome === 'reads_outlasted') drainAfter = performance.now() + OUTLASTED_BACKOFF_MS;
    onPass?.(outcome);
  }

  return {
    kick() {
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
      await running;
      db.close();
    },
  };
}
