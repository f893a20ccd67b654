import { closeSync, mkdtempSync, openSync, readSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { waitFor } from '@screenfleet/runtime';
import {
  createSqliteContentStore,
  openSqliteConnection,
  openSqliteDatabase,
  type ContentStore,
  type SqliteDatabase,
  type SqliteDatabaseOptions,
} from '@screenfleet/storage';
import { buildItem, t } from './content-store.contract';

/** A read that holds its snapshot (it reads the table) for about 100 ms of counting. */
const slowRead = `SELECT (SELECT count(*) FROM content_items)
  + (WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 200000)
     SELECT count(*) FROM n) AS n`;

/**
 * How many times the WAL has started over: its header's checkpoint sequence number (bytes 12-15,
 * big-endian; SQLite's WAL format), which SQLite bumps each time the writer starts it over.
 */
function walRestarts(file: string): number {
  const header = Buffer.alloc(16);
  const fd = openSync(`${file}-wal`, 'r');
  try {
    return readSync(fd, header, 0, 16, 0) === 16 ? header.readUInt32BE(12) : 0;
  } finally {
    closeSync(fd);
  }
}

/** Inserts batches of `size` items (50: about 1 MiB of WAL every 5) until `writing()` is false. */
async function writeLoop(store: ContentStore, loop: number, writing: () => boolean, size = 50) {
  const text = 'words of a screen '.repeat(100);
  for (let batch = 0; writing(); batch++) {
    const items = Array.from({ length: size }, (_, i) =>
      buildItem({
        _id: `item-${loop}-${batch}-${i}`,
        timestamp: t(batch),
        ocr_results: [
          { text, confidence: 0.9, text_json: null, ocr_engine: 'tesseract', focused: true },
        ],
      }),
    );
    await store.insertItems(items);
  }
}

// SQLite's checkpoint starvation: the writer may start the WAL over only while no read uses it,
// so reads that overlap without a gap (searches back to back) let it grow for ever; the
// checkpointer makes the gap (docs/adr/0011).
describe('sqlite checkpointer', () => {
  let dir: string;
  const cleanups: Array<() => unknown> = [];

  /** Past 1 MiB of WAL (256 pages), not the default 16 MiB: a short test writes enough. */
  async function openDatabase(options: SqliteDatabaseOptions = {}): Promise<SqliteDatabase> {
    const opened = await openSqliteDatabase(path.join(dir, 'screenfleet.db'), {
      maxWalPages: 256,
      ...options,
    });
    cleanups.push(() => opened.close());
    return opened;
  }

  beforeEach(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'sf-sqlite-checkpointer-'));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
  });

  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  it('when reads overlap without a gap while writes go on, then the WAL still starts over, and every read answers', async () => {
    // A pass that misses the writer's gaps (a busy machine) backs off: 10 s by default, longer
    // than this test, which is about the passes that get the WAL started over.
    const database = await openDatabase({ checkpointer: { drainBackoffMs: 500 } });
    const store = createSqliteContentStore({ database });
    await store.ensureIndexes();
    let writing = true;
    const writes = writeLoop(store, 0, () => writing);
    // Two loops of reads, the second started half a read later: one read is always open.
    const answered: number[] = [];
    const readLoop = async () => {
      while (writing) {
        const [row] = await database.readers.query<{ n: number }>(slowRead, []);
        answered.push(row!.n);
      }
    };
    const firstLoop = readLoop();
    await new Promise((resolve) => setTimeout(resolve, 50));
    const secondLoop = readLoop();
    const before = walRestarts(database.file);

    await new Promise((resolve) => setTimeout(resolve, 4000));
    const after = walRestarts(database.file);
    writing = false;
    await Promise.all([writes, firstLoop, secondLoop]);

    // Several 1 MiB WALs' worth were written meanwhile; each time past 256 pages it starts over.
    expect(after - before).toBeGreaterThanOrEqual(2);
    expect(answered.length).toBeGreaterThanOrEqual(4);
    expect(answered.every((n) => n >= 200_000)).toBe(true);
  });

  it('when writes never pause and reads overlap without a gap, then every pass that held the reads gets the WAL started over (the writer copies the rest between two transactions)', async () => {
    const passes: string[] = [];
    const database = await openDatabase({
      checkpointer: { onPass: (outcome) => passes.push(outcome) },
    });
    const store = createSqliteContentStore({ database });
    await store.ensureIndexes();
    let writing = true;
    // Four loops: a batch is always queued, so the writer begins a transaction as soon as one
    // commits, and a checkpoint beside it never finds the WAL all copied at a transaction's start.
    const writes = [0, 1, 2, 3].map((loop) => writeLoop(store, loop, () => writing));
    const readLoop = async () => {
      while (writing) await database.readers.query(slowRead, []);
    };
    const firstLoop = readLoop();
    await new Promise((resolve) => setTimeout(resolve, 50));
    const secondLoop = readLoop();
    const before = walRestarts(database.file);

    await waitFor(() => passes.length >= 3, { timeoutMs: 30_000, what: 'three passes' });
    writing = false;
    await Promise.all([...writes, firstLoop, secondLoop]);
    const restarts = walRestarts(database.file) - before;

    // 'reads_outlasted' only if a 100 ms read took 2 s on a loaded machine; never 'not_restarted'.
    expect(passes).not.toContain('not_restarted');
    const copied = passes.filter((outcome) => outcome === 'restarted').length;
    expect(copied).toBeGreaterThanOrEqual(2);
    // Each such pass is followed by a commit that starts the WAL over (the last one may not be).
    expect(restarts).toBeGreaterThanOrEqual(copied - 1);
  });

  it('when a pass does not get the WAL started over under sustained writes, then no read is held again within the backoff', async () => {
    const passes: string[] = [];
    const database = await openDatabase({
      // A backoff longer than the test: any pass after the first would be one within it.
      checkpointer: { drainBackoffMs: 10 * 60_000, onPass: (outcome) => passes.push(outcome) },
    });
    const store = createSqliteContentStore({ database });
    await store.ensureIndexes();
    // A read outside the readers (a sqlite3 shell, say) keeps its snapshot, so no pass can get the
    // WAL started over: what writes that never pause do by chance, every time.
    const outside = openSqliteConnection(database.file);
    cleanups.push(() => outside.close());
    outside.exec('BEGIN');
    outside.prepare('SELECT count(*) FROM content_items').get();
    cleanups.push(() => outside.exec('COMMIT'));

    let writing = true;
    // Four loops of one-item writes: commits back to back, each one a kick.
    const writes = [0, 1, 2, 3].map((loop) => writeLoop(store, loop, () => writing, 1));
    // Two loops of trivial reads, one every 5 ms each.
    const readLoops = [0, 1].map(async () => {
      while (writing) {
        await database.readers.query('SELECT 1 AS one', []);
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
    });
    await waitFor(() => passes.length > 0, { timeoutMs: 20_000, what: 'a first pass' });
    // Then 400 more reads, 200 a loop: at least 1 s (a pause of 5 ms before each), in which the
    // commits would kick a pass after every one (with 100 ms between two).
    const { reads: from, held: heldByFirst } = database.readers.stats();
    await waitFor(() => database.readers.stats().reads >= from + 400, {
      timeoutMs: 30_000,
      what: () => `400 more reads (${database.readers.stats().reads - from} so far)`,
    });
    writing = false;
    await Promise.all([...writes, ...readLoops]);
    await database.close(); // a pass in progress ends first and is reported

    // One pass, which could not start the WAL over ('reads_outlasted' only if a trivial read took
    // a second: it backs off the same).
    expect(passes).toEqual([expect.stringMatching(/^(not_restarted|reads_outlasted)$/)]);
    // It held each loop's read at most once, and no read waited after it.
    expect(heldByFirst).toBeLessThanOrEqual(readLoops.length);
    expect(database.readers.stats().held).toBe(heldByFirst);
  });
});
