import { execFile } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { StoreUnavailableError } from '@screenfleet/contracts';
import {
  ContentRejectedError,
  createSqliteContentStore,
  openSqliteConnection,
  openSqliteDatabase,
  type ContentDocument,
  type SqliteDatabase,
} from '@screenfleet/storage';
import { buildItem, t } from './content-store.contract';

const run = promisify(execFile);

// The writer thread's group commit, on real files: what it promises each write (answered after
// its own commit, failing alone) and what a failed commit leaves (nothing of its writes).
describe('sqlite writer thread', () => {
  let dir: string;
  let file: string;
  const toClose: Array<{ close(): unknown }> = [];

  beforeEach(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'sf-sqlite-writer-'));
    file = path.join(dir, 'screenfleet.db');
  });

  afterEach(async () => {
    for (const closable of toClose.splice(0).reverse()) await closable.close();
    await rm(dir, { recursive: true, force: true });
  });

  async function open(options: Parameters<typeof openSqliteDatabase>[1] = {}) {
    const database = await openSqliteDatabase(file, options);
    toClose.push(database);
    const store = createSqliteContentStore({ database });
    await store.ensureIndexes();
    return { database, store };
  }

  const batchOf = (name: string, size: number, timestamp = t(1)): ContentDocument[] =>
    Array.from({ length: size }, (_, i) => buildItem({ _id: `${name}-${i}`, timestamp }));

  /** Which of these ids a connection of the test's own finds committed in the file, now. */
  function committed(ids: string[]): number {
    const db = openSqliteConnection(file);
    try {
      const row = db
        .prepare(
          'SELECT count(*) AS n FROM content_items WHERE id IN (SELECT value FROM json_each(?))',
        )
        .get(JSON.stringify(ids)) as { n: number };
      return row.n;
    } finally {
      db.close();
    }
  }

  const transactions = (database: SqliteDatabase) => database.writer.stats().transactions;

  it('when many batches come at once, then they share few transactions, and each is answered only once its own items are committed', async () => {
    const { database, store } = await open();
    const before = transactions(database);
    const batches = Array.from({ length: 40 }, (_, i) => batchOf(`b${i}`, 25));
    const seenAtAnswer: number[] = [];

    await Promise.all(
      batches.map(async (batch) => {
        expect(await store.insertItems(batch)).toEqual({ inserted: 25, alreadyStored: 0 });
        // At the moment of the answer, another connection finds every item of it on disk.
        seenAtAnswer.push(committed(batch.map((doc) => doc._id)));
      }),
    );

    expect(seenAtAnswer).toEqual(batches.map(() => 25));
    const used = transactions(database) - before;
    expect(used).toBeGreaterThanOrEqual(1);
    expect(used).toBeLessThan(batches.length / 2);
  });

  it('when one batch of a group fails, then it fails alone: the others in its transaction are stored', async () => {
    const { database, store } = await open();
    const before = transactions(database);
    const good = Array.from({ length: 9 }, (_, i) => batchOf(`good${i}`, 10));
    // A timestamp the time-ordered key cannot hold, in the middle of an otherwise good batch.
    const bad = [...batchOf('bad', 5), buildItem({ _id: 'bad-x', timestamp: new Date(8.64e15) })];

    const outcomes = await Promise.allSettled([
      ...good.slice(0, 4).map((batch) => store.insertItems(batch)),
      store.insertItems(bad),
      ...good.slice(4).map((batch) => store.insertItems(batch)),
    ]);

    expect(outcomes.map((outcome) => outcome.status)).toEqual([
      ...Array(4).fill('fulfilled'),
      'rejected',
      ...Array(5).fill('fulfilled'),
    ]);
    expect((outcomes[4] as PromiseRejectedResult).reason).toBeInstanceOf(ContentRejectedError);
    expect(committed(good.flat().map((doc) => doc._id))).toBe(90);
    expect(committed(bad.map((doc) => doc._id))).toBe(0); // none of it, not even its good half
    expect(transactions(database) - before).toBeLessThan(good.length);
  });

  it('when a group would pass its item bound, then the rest waits for the next transaction', async () => {
    const { database, store } = await open({ group: { maxItems: 100 } });
    const before = transactions(database);

    await Promise.all(
      Array.from({ length: 10 }, (_, i) => store.insertItems(batchOf(`bound${i}`, 50))),
    );

    // 500 items, at most 100 a transaction.
    expect(transactions(database) - before).toBeGreaterThanOrEqual(5);
    expect(await store.countRange({ to: t(100) })).toBe(500);
  });

  it('when another connection holds the file locked past the busy timeout, then the batch rejects StoreUnavailableError and nothing of it is stored; later it goes in', async () => {
    const { store } = await open({ busyTimeoutMs: 200 });
    const holder = openSqliteConnection(file);
    toClose.push(holder);
    holder.exec('BEGIN IMMEDIATE');
    const batch = batchOf('locked', 20);

    const error = await store.insertItems(batch).then(
      () => undefined,
      (e: unknown) => e,
    );

    expect(error).toBeInstanceOf(StoreUnavailableError);
    expect((error as Error).message).toMatch(/database is locked/);
    holder.exec('ROLLBACK');
    expect(committed(batch.map((doc) => doc._id))).toBe(0);
    expect(await store.insertItems(batch)).toEqual({ inserted: 20, alreadyStored: 0 });
  });

  it('when the disk fills up at a commit (a small tmpfs), then that batch rejects StoreUnavailableError, nothing of it is stored, and it goes in once there is room', async () => {
    // As root, in a mount namespace of its own, so the tmpfs goes away with the child.
    const child = path.join(__dirname, 'sqlite-full-disk.child.ts');
    const root = path.resolve(__dirname, '../../..');
    const mount = mkdtempSync(path.join(os.tmpdir(), 'sf-sqlite-full-'));
    try {
      const { stdout } = await run(
        'unshare',
        [
          '--mount',
          '--propagation',
          'private',
          'sh',
          '-c',
          `mount -t tmpfs -o size=6m tmpfs "$1" && exec "$2" --import tsx "$3" "$1"`,
          'sh',
          mount,
          process.execPath,
          child,
        ],
        { env: { ...process.env, TSX_TSCONFIG_PATH: path.join(root, 'tsconfig.check.json') } },
      );
      const report = JSON.parse(stdout.trim().split('\n').pop()!) as {
        failedBatch: number;
        errorClass: string;
        errorCode: string;
        failedStored: number;
        storedBefore: number;
        batchesBefore: number;
        retried: { inserted: number; alreadyStored: number };
        storedAfter: number;
      };
      expect(report.failedBatch).toBeGreaterThan(0); // some went in before the disk was full
      expect(report.errorClass).toBe('StoreUnavailableError');
      expect(report.errorCode).toMatch(/^SQLITE_(FULL|IOERR)/);
      expect(report.failedStored).toBe(0);
      expect(report.storedBefore).toBe(report.batchesBefore * 50);
      expect(report.retried).toEqual({ inserted: 50, alreadyStored: 0 });
      expect(report.storedAfter).toBe(report.storedBefore + 50);
    } finally {
      await rm(mount, { recursive: true, force: true });
    }
  });
});
