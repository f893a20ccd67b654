import AsyncDatabase from 'libsql/promise';

/** Checkpoints at most this often (a kick within it waits for the next commit). */
const MIN_INTERVAL_MS = 100;

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
 * what no reader still needs; SQLite starts the WAL over at the next commit once all is copied.
 * The writer keeps an autocheckpoint of its own at 10,000 pages, should this ever fall behind.
 */
export async function startSqliteCheckpointer(
  file: string,
  options: { busyTimeoutMs: number },
): Promise<SqliteCheckpointer> {
  const db = new AsyncDatabase(file);
  await db.exec(`PRAGMA busy_timeout = ${options.busyTimeoutMs}; PRAGMA synchronous = FULL;`);
  let running: Promise<void> | undefined;
  let last = 0;
  let closed = false;
  return {
    kick() {
      if (closed || running || performance.now() - last < MIN_INTERVAL_MS) return;
      running = db
        .exec('PRAGMA wal_checkpoint(PASSIVE)')
        // Best effort: what it leaves, the next one or the writer's autocheckpoint copies.
        .then(
          () => undefined,
          () => undefined,
        )
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
