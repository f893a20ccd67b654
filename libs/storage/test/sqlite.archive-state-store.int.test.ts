import { fork, type ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { StoreUnavailableError } from '@screenfleet/contracts';
import {
  createSqliteArchiveStateStore,
  openSqliteConnection,
  openSqliteDatabase,
  type ArchiveStateStore,
} from '@screenfleet/storage';
import { buildState, describeArchiveStateStoreContract } from './archive-state-store.contract';

// A real file in a temp directory, one per test, removed after it. Each store the contract opens
// has its own connection to the file (a second worker).
function tempDir(): string {
  return mkdtempSync(path.join(os.tmpdir(), 'sf-sqlite-state-'));
}

describeArchiveStateStoreContract('sqlite (libsql)', () => {
  const dir = tempDir();
  const file = path.join(dir, 'screenfleet.db');
  return Promise.resolve({
    open: () => createSqliteArchiveStateStore({ file }),
    cleanup: () => rm(dir, { recursive: true, force: true }),
  });
});

describe('sqlite archive state store', () => {
  let dir: string;
  let file: string;
  const toClose: Array<{ close(): unknown }> = [];

  beforeEach(() => {
    dir = tempDir();
    file = path.join(dir, 'screenfleet.db');
  });

  afterEach(async () => {
    for (const closable of toClose.splice(0).reverse()) await closable.close();
    await rm(dir, { recursive: true, force: true });
  });

  async function open(options: { busyTimeoutMs?: number } = {}): Promise<ArchiveStateStore> {
    const database = await openSqliteDatabase(file, options);
    toClose.push(database);
    return createSqliteArchiveStateStore({ database });
  }

  it('when two stores open the same file, then each sees the other’s state and lease at once', async () => {
    const [a, b] = [await open(), await open()];
    const at = (seconds: number) => new Date(Date.UTC(2026, 10, 23, 12, 0, seconds));

    await a.load(buildState());
    await b.update({ failures: 3, last_cleanup: at(1) });
    expect(await a.load(buildState())).toEqual(buildState({ failures: 3, last_cleanup: at(1) }));

    expect(await a.acquireLease('a', 10_000, at(0))).toBe(true);
    expect(await b.acquireLease('b', 10_000, at(5))).toBe(false);
    await a.releaseLease('a');
    expect(await b.acquireLease('b', 10_000, at(6))).toBe(true);
    expect(await a.acquireLease('a', 10_000, at(7))).toBe(false);
  });

  it('when the state and lease are written, the database closed and opened again, then both are there', async () => {
    const saved = buildState({
      failures: 2,
      watermark: { timestamp: new Date('2026-10-01T08:30:00.123Z'), id: 'item-42' },
    });
    const first = await open();
    await first.save(saved);
    await first.update({ last_error: 'after the save' });
    expect(await first.acquireLease('a', 60_000, new Date())).toBe(true);
    await toClose.pop()!.close();

    const reopened = await open();

    expect(await reopened.load(buildState())).toEqual({ ...saved, last_error: 'after the save' });
    expect(await reopened.acquireLease('b', 60_000, new Date())).toBe(false);
    expect(await reopened.acquireLease('a', 60_000, new Date())).toBe(true);
  });

  it('when 4 processes race for the lease over 40 rounds, then each round has exactly one winner', async () => {
    await (await open()).load(buildState()); // the tables exist before the racers start
    const rounds = 40;
    const racers = await Promise.all(
      ['p0', 'p1', 'p2', 'p3'].map((holder) =>
        startRacer([file, holder, String(rounds), String(Date.UTC(2026, 0, 1)), '20000']),
      ),
    );

    for (const racer of racers) racer.child.send('go');
    const won = await Promise.all(racers.map((racer) => racer.result));

    const winnersPerRound = Array.from(
      { length: rounds },
      (_, round) => won.filter((list) => list.includes(round)).length,
    );
    expect(winnersPerRound).toEqual(Array.from({ length: rounds }, () => 1));
  });

  it('when another connection holds the write lock past the busy timeout, then operations reject StoreUnavailableError naming the store, and work once it lets go', async () => {
    const store = await open({ busyTimeoutMs: 200 });
    await store.load(buildState());
    const holder = openSqliteConnection(file);
    toClose.push(holder);
    holder.exec('BEGIN IMMEDIATE');

    for (const operation of [
      () => store.save(buildState({ failures: 1 })),
      () => store.update({ failures: 1 }),
      () => store.acquireLease('a', 60_000, new Date()),
      () => store.releaseLease('a'),
    ]) {
      const error = await operation().then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(StoreUnavailableError);
      expect((error as StoreUnavailableError).message).toMatch(/archive state store unavailable/);
    }
    expect(await store.load(buildState({ failures: 9 }))).toEqual(buildState()); // reads go on

    holder.exec('ROLLBACK');
    await store.update({ failures: 1 });
    expect(await store.load(buildState())).toEqual(buildState({ failures: 1 }));
  });
});

/** A child process on the same file (tsx, with the packages' sources): see the .child.ts file. */
function startRacer(args: string[]): Promise<{ child: ChildProcess; result: Promise<number[]> }> {
  const root = path.resolve(__dirname, '../../..');
  const child = fork(path.join(__dirname, 'sqlite-lease-race.child.ts'), args, {
    execArgv: ['--import', 'tsx'],
    env: { ...process.env, TSX_TSCONFIG_PATH: path.join(root, 'tsconfig.check.json') },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code) => reject(new Error(`racer exited (${code}) before it was ready`)));
    child.once('message', () => {
      const result = new Promise<number[]>((done, failed) => {
        child.once('message', (message: { won?: number[]; error?: string }) =>
          message.won ? done(message.won) : failed(new Error(message.error)),
        );
        child.once('exit', (code) => failed(new Error(`racer exited (${code}) without a result`)));
      });
      resolve({ child, result });
    });
  });
}
