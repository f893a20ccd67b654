import { mkdtempSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { TimeoutError } from '@screenfleet/contracts';
import { openSqliteDatabase, type SqliteDatabase } from '@screenfleet/storage';

/** A statement that runs for about a minute unless stopped: it counts to 2 billion. */
const slow = `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 2000000000)
              SELECT count(*) AS n FROM n`;

// The reader connections: statements run on libsql's threads, so the event loop goes on, and a
// deadline stops the statement itself, not just the wait for it.
describe('sqlite reader connections', () => {
  let dir: string;
  let database: SqliteDatabase;

  beforeEach(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'sf-sqlite-readers-'));
    database = await openSqliteDatabase(path.join(dir, 'screenfleet.db'), { readers: 1 });
  });

  afterEach(async () => {
    await database.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('when a read runs, then the event loop goes on meanwhile: a timer due during it fires before it ends', async () => {
    const events: string[] = [];
    const read = database.readers
      .query(slow, [], { deadline: performance.now() + 1500 })
      .catch(() => events.push('read ended'));
    await new Promise<void>((resolve) =>
      setTimeout(() => {
        events.push('timer fired');
        resolve();
      }, 50),
    );
    await read;

    expect(events).toEqual(['timer fired', 'read ended']);
  });

  it('when a read runs past its deadline, then it is stopped there, and its connection serves the next read at once', async () => {
    const started = performance.now();
    const error = await database.readers.query(slow, [], { deadline: started + 200 }).then(
      () => undefined,
      (e: unknown) => e,
    );
    const stoppedAfter = performance.now() - started;

    expect(error).toBeInstanceOf(TimeoutError);
    // The statement alone would run for about a minute; stopped, it let go of the one
    // connection, which answers the next read.
    expect(stoppedAfter).toBeLessThan(10_000);
    const next = performance.now();
    expect(await database.readers.query('SELECT 42 AS answer', [])).toEqual([{ answer: 42 }]);
    expect(performance.now() - next).toBeLessThan(10_000);
  });

  it('when the deadline passes while a read waits for a connection, then it is not started', async () => {
    const first = database.readers
      .query(slow, [], { deadline: performance.now() + 300 })
      .catch((e: unknown) => e);
    const queued = database.readers
      .query('SELECT 1 AS one', [], { deadline: performance.now() + 100 })
      .catch((e: unknown) => e);

    expect(await queued).toBeInstanceOf(TimeoutError);
    expect(await first).toBeInstanceOf(TimeoutError);
  });

  it('when a task must run without reads, then it waits for the read in progress, and a read asked meanwhile starts after it', async () => {
    const events: string[] = [];
    const started = performance.now();
    // Stopped at its deadline, 300 ms from now: until then it is in progress.
    const inProgress = database.readers
      .query(slow, [], { deadline: started + 300 })
      .catch((e: unknown) => e);
    let taskAfter = 0;
    const task = database.readers.withoutReads(async () => {
      taskAfter = performance.now() - started;
      events.push('task');
    }, 5000);
    const askedMeanwhile = database.readers
      .query('SELECT 1 AS one', [])
      .then(() => events.push('read asked meanwhile ended'));

    expect(await task).toBe(true);
    expect(await inProgress).toBeInstanceOf(TimeoutError);
    // (less a few ms: libuv fires a timer by its loop's clock, read once per turn)
    expect(taskAfter).toBeGreaterThanOrEqual(295);
    await askedMeanwhile;
    expect(events).toEqual(['task', 'read asked meanwhile ended']);
    expect(database.readers.stats()).toEqual({ reads: 2, held: 1 });
  });

  it('when the reads in progress outlast the wait, then the task does not run, and the held reads go on', async () => {
    let ran = false;
    const inProgress = database.readers
      .query(slow, [], { deadline: performance.now() + 1000 })
      .catch(() => undefined);
    const task = database.readers.withoutReads(async () => {
      ran = true;
    }, 100);
    const held = database.readers.query<{ one: number }>('SELECT 1 AS one', []);

    expect(await task).toBe(false);
    expect(ran).toBe(false);
    await inProgress;
    expect(await held).toEqual([{ one: 1 }]);
  });

  it('when a read is held past its deadline, then it rejects TimeoutError there, not when the hold ends', async () => {
    let letGo!: () => void;
    const holding = database.readers.withoutReads(
      () => new Promise<void>((resolve) => (letGo = resolve)),
      100,
    );
    await new Promise((resolve) => setTimeout(resolve, 20)); // the hold is on

    const error = await database.readers
      .query('SELECT 1 AS one', [], { deadline: performance.now() + 100 })
      .then(
        () => undefined,
        (e: unknown) => e,
      );

    expect(error).toBeInstanceOf(TimeoutError);
    letGo();
    expect(await holding).toBe(true);
  });

  describe('reads asked to run alone (relevance searches)', () => {
    beforeEach(async () => {
      // Two connections, so that only the lane keeps two reads from running at once.
      await database.close();
      database = await openSqliteDatabase(path.join(dir, 'screenfleet.db'), { readers: 2 });
    });

    /** A read of about `ms` that notes when it starts and ends, alone. */
    const timedRead = (log: string[], name: string, ms: number, deadline?: number) => {
      const sql = `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?)
                   SELECT count(*) AS n, '${name}' AS name FROM n`;
      return database.readers
        .query(sql, [ms * 5000], { alone: true, ...(deadline ? { deadline } : {}) })
        .then(
          () => log.push(`${name} ended`),
          (error: unknown) =>
            log.push(`${name} ${error instanceof TimeoutError ? 'timed out' : String(error)}`),
        );
    };

    it('then they run one after another in the order asked, while other reads go beside them', async () => {
      const log: string[] = [];
      const first = timedRead(log, 'first', 200);
      const second = timedRead(log, 'second', 10);
      const beside = database.readers
        .query('SELECT 1 AS one', [])
        .then(() => log.push('beside ended'));

      await Promise.all([first, second, beside]);

      expect(log).toEqual(['beside ended', 'first ended', 'second ended']);
    });

    it('then one whose deadline passes while it waits its turn rejects TimeoutError, and the next still gets its turn', async () => {
      const log: string[] = [];
      const first = timedRead(log, 'first', 300);
      const late = timedRead(log, 'late', 10, performance.now() + 50);
      const next = timedRead(log, 'next', 10);

      await Promise.all([first, late, next]);

      expect(log).toEqual(['late timed out', 'first ended', 'next ended']);
    });
  });
});
