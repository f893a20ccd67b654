/**
 * The main thread's side of the SQLite writer thread (sqlite-writer.thread.ts), and the messages
 * the two sides exchange over one MessagePort each way (below). Each side imports only the
 * other's types: the thread's module runs on load (it is the worker's entry), and the thread
 * must not load this module's store-errors.ts, which brings the MongoDB driver.
 */
import path from 'node:path';
import { MessageChannel, Worker, type MessagePort } from 'node:worker_threads';
import { StoreUnavailableError } from '@screenfleet/contracts';
import type { WriteArgs, WriteName, WriteResult } from './sqlite-writer.operations';
import { ContentRejectedError, type StoreErrorKind } from './store-error-kinds';
import { toStoreError } from './store-errors';

const defaultLimits: WriterLimits = { maxItems: 5000, maxBytes: 32 * 1024 * 1024 };

/** The writer thread as the main thread sees it. */
export interface SqliteWriter {
  /**
   * Queues a write; resolves once the transaction that ran it committed (fsynced), rejects with
   * its own error (SQLite's, or the operation's) when it failed, or with the commit's when the
   * commit failed: then nothing of it was stored.
   */
  write<N extends WriteName>(name: N, args: WriteArgs<N>, items?: number): Promise<WriteResult<N>>;
  /**
   * Copies the WAL into the database file between two of the thread's transactions (a PASSIVE
   * checkpoint on its connection): when nothing else reads the WAL, everything is copied and
   * the next transaction starts the WAL over. The checkpointer's last step (sqlite-checkpointer.ts).
   */
  copyWal(): Promise<WalCopy>;
  /**
   * Transactions begun (or tried: a locked file), writes answered, and commits whose COMMIT
   * (its fsync, and any checkpoint SQLite ran in it) took over 30 ms, so far (tests, metrics).
   */
  stats(): { transactions: number; writes: number; slowCommits: number };
  /** Finishes the queued writes, closes the connection and ends the thread. */
  close(): Promise<void>;
}

/** What a WAL copy found (PRAGMA wal_checkpoint's row): the WAL's pages, how many are copied. */
export interface WalCopy {
  /** Another checkpoint ran (nothing copied now). */
  busy: boolean;
  pages: number;
  copied: number;
}

/** A COMMIT slower than this is counted (stats().slowCommits). */
export const SLOW_COMMIT_MS = 30;

interface Pending {
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

interface Thread {
  worker: Worker;
  port: MessagePort;
  exited: Promise<void>;
  /** False once it exited: a write must not be posted to it then (nothing would answer). */
  alive: boolean;
}

/**
 * Starts the writer thread on `file` (created when missing) and resolves once its connection is
 * open (WAL, synchronous = FULL); a file it cannot open rejects StoreUnavailableError. Should the
 * thread ever die, the writes in it reject StoreUnavailableError (retry later: they are
 * idempotent) and the next write starts a new one.
 */
export async function startSqliteWriter(
  file: string,
  options: {
    busyTimeoutMs: number;
    group?: Partial<WriterLimits>;
    /** Called after each committed transaction (the checkpointer's cue). */
    onCommit?: () => void;
  },
): Promise<SqliteWriter> {
  const data: WriterThreadData = {
    file,
    busyTimeoutMs: options.busyTimeoutMs,
    limits: { ...defaultLimits, ...options.group },
  };
  const pending = new Map<number, Pending>();
  const counts = { transactions: 0, writes: 0, slowCommits: 0 };
  let nextId = 1;
  let closed = false;
  let thread: Promise<Thread> | undefined;

  function onMessage(message: FromWriter): void {
    if (message.type === 'wal-copied') {
      const { id, copy } = message;
      pending.get(id)?.resolve(copy);
      pending.delete(id);
      return;
    }
    if (message.type !== 'group') return;
    counts.transactions += 1;
    if ((message.commitMs ?? 0) > SLOW_COMMIT_MS) counts.slowCommits += 1;
    if (message.committed) options.onCommit?.();
    for (const reply of message.replies) {
      const waiting = pending.get(reply.id);
      if (!waiting) continue;
      pending.delete(reply.id);
      counts.writes += 1;
      if (reply.ok) waiting.resolve(reply.value);
      else waiting.reject(decodeError(reply.error));
    }
  }

  function onExit(reason: string): void {
    thread = undefined;
    const error = new StoreUnavailableError(`the SQLite writer thread stopped: ${reason}`);
    for (const waiting of pending.values()) waiting.reject(error);
    pending.clear();
  }

  function running(): Promise<Thread> {
    thread ??= startThread(data, onMessage, onExit).catch((error: unknown) => {
      thread = undefined;
      throw error;
    });
    return thread;
  }
  await running().catch((error: unknown) => {
    throw toStoreError(error, 'open', `SQLite database ${file}`);
  });

  /** Posts what `message(id)` makes; resolves with its answer. */
  async function ask<T>(message: (id: number) => ToWriter): Promise<T> {
    if (closed) throw new StoreUnavailableError('the SQLite database is closed');
    const { port, alive } = await running();
    if (!alive) throw new StoreUnavailableError('the SQLite writer thread stopped');
    const id = nextId++;
    return new Promise((resolve, reject) => {
      pending.set(id, { resolve: resolve as (value: unknown) => void, reject });
      port.postMessage(message(id));
    });
  }

  return {
    write: (name, args, items = 1) => ask((id) => ({ type: 'write', id, name, args, items })),
    copyWal: () => ask((id) => ({ type: 'copy-wal', id })),
    stats: () => ({ ...counts }),
    async close() {
      if (closed) return;
      closed = true;
      if (!thread) return;
      const { port, exited } = await thread;
      port.postMessage({ type: 'close' } satisfies ToWriter);
      await exited;
    },
  };
}

/** A new thread, once its connection is open. */
function startThread(
  data: WriterThreadData,
  onMessage: (message: FromWriter) => void,
  onExit: (reason: string) => void,
): Promise<Thread> {
  const { port1: port, port2 } = new MessageChannel();
  const worker = threadWorker({ ...data, port: port2 }, [port2]);
  let failure: Error | undefined;
  worker.on('error', (error) => (failure = error));
  const thread: Thread = { worker, port, exited: Promise.resolve(), alive: true };
  thread.exited = new Promise<void>((resolve) =>
    worker.once('exit', (code) => {
      thread.alive = false;
      port.close();
      onExit(failure?.message ?? `exit code ${code}`);
      resolve();
    }),
  );
  return new Promise((resolve, reject) => {
    port.once('message', (first: FromWriter) => {
      if (first.type === 'ready') {
        port.on('message', onMessage);
        resolve(thread);
      } else if (first.type === 'open-failed') {
        reject(decodeError(first.error));
      }
    });
    void thread.exited.then(() =>
      reject(new StoreUnavailableError(failure?.message ?? 'no reason')),
    );
  });
}

/**
 * The thread runs this module's sibling, compiled or (under ts-jest or tsx, from the sources)
 * compiled on the fly by tsx, registered in the thread first.
 */
function threadWorker(data: WriterThreadData & { port: MessagePort }, transfer: MessagePort[]) {
  const script = path.join(__dirname, `sqlite-writer.thread${path.extname(__filename)}`);
  const options = {
    workerData: data,
    transferList: transfer,
    // A small young generation: what the thread allocates (a group's rows) dies within a
    // transaction, and the default's semi-spaces cost ~25 MB of RSS for nothing. The old
    // generation's cap is far above what the queued writes can hold (the ingest worker's
    // bytes in flight), only against a runaway.
    resourceLimits: { maxYoungGenerationSizeMb: 4, maxOldGenerationSizeMb: 512 },
  };
  if (!script.endsWith('.ts')) return new Worker(script, options);
  const tsx = require.resolve('tsx/cjs/api');
  const source = `require(${JSON.stringify(tsx)}).register(); require(${JSON.stringify(script)});`;
  return new Worker(source, { ...options, eval: true });
}

// How the two sides talk: what the thread is started with, the messages each way, errors.

export interface WriterLimits {
  /** A group's transaction takes no more writes once it holds this many items... */
  maxItems: number;
  /** ...or this many bytes of documents (a single larger write still goes, alone). */
  maxBytes: number;
}

/** What the thread is started with (workerData). */
export interface WriterThreadData {
  file: string;
  busyTimeoutMs: number;
  limits: WriterLimits;
}

/**
 * To the thread: a write to run, a copy of the WAL between two transactions, or "finish what is
 * queued, then close".
 */
export type ToWriter = WriteRequest | { type: 'copy-wal'; id: number } | { type: 'close' };

export interface WriteRequest {
  type: 'write';
  id: number;
  name: WriteName;
  args: unknown;
  /** Items this write adds to its group (an insert's documents; 1 for the rest). */
  items: number;
}

/** From the thread: ready (or not), and the answers of each committed (or failed) group. */
export type FromWriter =
  | { type: 'ready' }
  | { type: 'open-failed'; error: EncodedError }
  | { type: 'group'; replies: WriteReply[]; committed: boolean; commitMs?: number }
  | { type: 'wal-copied'; id: number; copy: WalCopy };

export type WriteReply =
  { id: number; ok: true; value: unknown } | { id: number; ok: false; error: EncodedError };

/**
 * An error as it crosses the thread boundary (a structured clone keeps neither class nor code):
 * the thread's encodeError makes it, decodeError below undoes it.
 */
export interface EncodedError {
  kind: StoreErrorKind;
  name: string;
  message: string;
  /** SQLite's result code (SQLITE_BUSY, SQLITE_FULL...) when there is one. */
  code?: string;
}

/**
 * The error again, of a class the adapters' toStoreError maps as it would the original: a SQLite
 * error keeps its code, the port's own errors their class.
 */
function decodeError({ kind, name, message, code }: EncodedError): Error {
  if (code) return Object.assign(new Error(message), { name, code });
  if (kind === 'rejected') return new ContentRejectedError(message);
  if (kind === 'unavailable') return new StoreUnavailableError(message);
  return Object.assign(new Error(message), { name });
}
