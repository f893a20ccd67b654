import { TimeoutError } from '@screenfleet/contracts';
import AsyncDatabase, { type Statement } from 'libsql/promise';
import { createBoundedSignal } from './bounded-signal';

export interface ReadOptions {
  /**
   * performance.now() by which the read must have answered: past it, the statement is
   * interrupted (SQLite stops it at its next step) and the read rejects TimeoutError. A read
   * still waiting for a connection then is not started, and one that ends past it rejects the
   * same (its timer can fire late on a busy machine, after the statement finished): a read
   * with a deadline either answers by it or rejects.
   */
  deadline?: number;
  /**
   * Runs one at a time with the other reads so marked, in order of asking (each waiting to its
   * deadline): reads that score a whole index (relevance searches), so that on a small machine
   * they take one core at most and leave the rest to the writer and the event loop.
   */
  alone?: boolean;
}

/** Reader connections of the SQLite file, for every read of the sqlite adapters. */
export interface SqliteReaders {
  /**
   * Runs one statement on a free reader connection and resolves with its rows. Give statements
   * that answer in one row (an aggregate: count(*), group_concat, json_group_array): libsql runs
   * a statement's first step on a thread of its own (off the event loop, where an interrupt can
   * stop it), but steps for later rows on the caller's thread. One statement reads one WAL
   * snapshot: what was committed when it started, whatever commits meanwhile. A read may wait
   * (at most ~2 s, about once per 16 MiB written) while the checkpointer starts the WAL over.
   */
  query<T>(sql: string, params: readonly unknown[], options?: ReadOptions): Promise<T[]>;
  /**
   * Holds new reads, waits up to `waitMs` for the reads in progress to end, then runs `task`
   * while no read is open, and lets the held reads start. Resolves false without running `task`
   * when reads were still in progress at `waitMs`. The checkpointer's way to a WAL no reader
   * pins (sqlite-checkpointer.ts).
   */
  withoutReads(task: () => Promise<void>, waitMs: number): Promise<boolean>;
  /** Reads asked so far, and how many of them withoutReads held (tests, metrics). */
  stats(): { reads: number; held: number };
  /** Waits for the reads in progress, then closes the connections. */
  close(): Promise<void>;
}

interface Reader {
  db: AsyncDatabase;
  statements: Map<string, Promise<Statement>>;
}

/**
 * A pool of `connections` read-only connections (query_only) to `file`, which the writer has
 * opened in WAL mode: readers never wait for the writer, nor it for them. libsql's promise API
 * runs each statement on its own threads, so a read costs the event loop only the rows it
 * returns, and any number of connections read at once.
 */
export async function openSqliteReaders(
  file: string,
  options: { connections: number; busyTimeoutMs: number },
): Promise<SqliteReaders> {
  const idle: Reader[] = [];
  const all: Reader[] = [];
  const waiting: Array<(reader: Reader) => void> = [];
  try {
    for (let i = 0; i < options.connections; i++) {
      const db = new AsyncDatabase(file);
      const reader: Reader = { db, statements: new Map() };
      all.push(reader);
      await db.exec(`PRAGMA busy_timeout = ${options.busyTimeoutMs}; PRAGMA query_only = 1;`);
      idle.push(reader);
    }
  } catch (error) {
    for (const reader of all) reader.db.close();
    throw error;
  }
  let inUse = 0;
  const stats = { reads: 0, held: 0 };
  const aloneLane = createLane();
  /** Happens each time the last read in progress ends. */
  const lastReadEnded = createBoundedSignal();
  /** While set, new reads wait for it (withoutReads). */
  let held: Promise<void> | undefined;

  /** Resolves true once no read is in progress, false if reads still are at `waitMs`. */
  function noReadsWithin(waitMs: number): Promise<boolean> {
    return inUse === 0 ? Promise.resolve(true) : lastReadEnded.wait(waitMs);
  }

  function acquire(): Promise<Reader> {
    const reader = idle.pop();
    if (reader) return Promise.resolve(reader);
    return new Promise((resolve) => waiting.push(resolve));
  }

  function release(reader: Reader): void {
    const next = waiting.shift();
    if (next) next(reader);
    else idle.push(reader);
  }

  function statement(reader: Reader, sql: string): Promise<Statement> {
    let prepared = reader.statements.get(sql);
    if (!prepared) {
      prepared = reader.db.prepare(sql);
      prepared.catch(() => reader.statements.delete(sql));
      reader.statements.set(sql, prepared);
    }
    return prepared;
  }

  async function run<T>(
    reader: Reader,
    sql: string,
    params: readonly unknown[],
    deadline = Infinity,
  ) {
    const left = deadline - performance.now();
    if (left <= 0) throw deadlineError();
    const timer = deadline === Infinity ? undefined : setTimeout(() => reader.db.interrupt(), left);
    try {
      const rows = (await (await statement(reader, sql)).all(...params)) as T[];
      if (performance.now() > deadline) throw deadlineError();
      return rows;
    } catch (error) {
      if (isInterrupt(error)) throw deadlineError();
      throw error;
    } finally {
      clearTimeout(timer);
    }
  }

  return {
    async query<T>(sql: string, params: readonly unknown[], options: ReadOptions = {}) {
      stats.reads += 1;
      const leave = options.alone ? await aloneLane.enter(options.deadline) : undefined;
      try {
        if (held) stats.held += 1;
        while (held) await untilDeadline(held, options.deadline);
        if (all.length === 0) throw new Error('the SQLite readers are closed');
        inUse += 1;
        const reader = await acquire();
        try {
          return await run<T>(reader, sql, params, options.deadline);
        } finally {
          release(reader);
          inUse -= 1;
          if (inUse === 0) lastReadEnded.notify();
        }
      } finally {
        leave?.();
      }
    },
    async withoutReads(task, waitMs) {
      while (held) await held;
      let letGo!: () => void;
      held = new Promise((resolve) => (letGo = resolve));
      try {
        if (!(await noReadsWithin(waitMs))) return false;
        await task();
        return true;
      } finally {
        held = undefined;
        letGo();
      }
    },
    stats: () => ({ ...stats }),
    async close() {
      await noReadsWithin(Infinity);
      for (const reader of all.splice(0)) reader.db.close();
    },
  };
}

/** Resolves with `promise`, or rejects TimeoutError once `deadline` (performance.now()) passes. */
function untilDeadline<T>(promise: Promise<T>, deadline = Infinity): Promise<T> {
  if (deadline === Infinity) return promise;
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(deadlineError()), Math.max(0, deadline - performance.now()));
  });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

/**
 * One at a time, in order of arrival: `enter` resolves with the function that lets the next one
 * in, or rejects TimeoutError when its deadline passes first (it then leaves the line).
 */
function createLane() {
  let busy = false;
  const line: Array<() => void> = [];
  const leave = () => {
    const next = line.shift();
    if (next) next();
    else busy = false;
  };
  return {
    async enter(deadline?: number): Promise<() => void> {
      if (!busy) {
        busy = true;
        return leave;
      }
      let turn!: () => void;
      const inLine = new Promise<void>((resolve) => (turn = resolve));
      line.push(turn);
      try {
        await untilDeadline(inLine, deadline);
      } catch (error) {
        const at = line.indexOf(turn);
        // Its turn came as the deadline passed: let the next one in instead.
        if (at === -1) leave();
        else line.splice(at, 1);
        throw error;
      }
      return leave;
    },
  };
}

function deadlineError(): TimeoutError {
  return new TimeoutError('the read ran past its deadline and was stopped');
}

function isInterrupt(error: unknown): boolean {
  return error instanceof Error && 'code' in error && error.code === 'SQLITE_INTERRUPT';
}
