import { mkdtempSync, openSync, readSync, closeSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import {
  createSqliteContentStore,
  openSqliteDatabase,
  type SqliteDatabase,
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

// SQLite's checkpoint starvation: the writer may start the WAL over only while no read uses it,
// so reads that overlap without a gap (searches back to back) let it grow for ever; the
// checkpointer makes the gap (docs/adr/0011).
describe('sqlite checkpointer', () => {
  let dir: string;
  let database: SqliteDatabase;

  beforeEach(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'sf-sqlite-checkpointer-'));
    // Past 1 MiB of WAL (256 pages), not the default 32 MiB: a short test writes enough.
    database = await openSqliteDatabase(path.join(dir, 'screenfleet.db'), { maxWalPages: 256 });
  });

  afterEach(async () => {
    await database.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('when reads overlap without a gap while writes go on, then the WAL still starts over, and every read answers', async () => {
    const store = createSqliteContentStore({ database });
    await store.ensureIndexes();
    const text = 'words of a screen '.repeat(100);
    let writing = true;
    const writes = (async () => {
      for (let batch = 0; writing; batch++) {
        const items = Array.from({ length: 50 }, (_, i) =>
          buildItem({
            _id: `item-${batch}-${i}`,
            timestamp: t(batch),
            ocr_results: [
              { text, confidence: 0.9, text_json: null, ocr_engine: 'tesseract', focused: true },
            ],
          }),
        );
        await store.insertItems(items);
      }
    })();
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
});
