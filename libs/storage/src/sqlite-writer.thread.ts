/**
 * The writer thread: owns the only write connection to the file and runs every write of the
 * sqlite adapters (writeOperations, sqlite-writer.operations.ts). Writes queue here; each
 * transaction takes what is queued (up to the limits), runs each write in a savepoint of its own
 * (one that throws is undone alone), indexes the stored items for search at its top level (one
 * FTS5 segment), commits once and answers them all. Between two transactions it copies the WAL
 * into the file when the checkpointer asks (sqlite-checkpointer.ts). While a commit fsyncs,
 * the next writes queue in the port, so a busier store commits bigger groups, and a write waits
 * about one commit. docs/adr/0011. This module is the worker's entry (sqlite-writer.ts starts it
 * by its path) and runs on load: no module imports it.
 */
import { receiveMessageOnPort, workerData, type MessagePort } from 'node:worker_threads';
import type Database from 'libsql';
import { openSqliteConnection, statementCache } from './sqlite-connection';
import {
  needsPendingSearchRows,
  writeOperations,
  writePendingSearchRows,
  type WriterConnection,
} from './sqlite-writer.operations';
import type {
  EncodedError,
  FromWriter,
  ToWriter,
  WriteReply,
  WriteRequest,
  WriterThreadData,
} from './sqlite-writer';
import { classifySqliteError } from './store-error-kinds';

const { file, busyTimeoutMs, limits, port } = workerData as WriterThreadData & {
  port: MessagePort;
};
const send = (message: FromWriter) => port.postMessage(message);

/** The WAL's length (pages) past which a commit copies it itself: 128 MiB of 4 KiB pages. */
const WRITER_OWN_CHECKPOINT_PAGES = 32_768;

const queue: WriteRequest[] = [];
/** Asked for copies of the WAL (their ids), run before the next transaction. */
let copiesAsked: number[] = [];
let closing = false;
let scheduled = false;

function accept(message: ToWriter): void {
  if (message.type === 'close') closing = true;
  else if (message.type === 'copy-wal') copiesAsked.push(message.id);
  else queue.push(message);
}

/** Everything posted so far, at once: the writes that queued while the last commit ran. */
function takePosted(): void {
  for (let next = receiveMessageOnPort(port); next; next = receiveMessageOnPort(port)) {
    accept(next.message as ToWriter);
  }
}

function start(db: Database.Database): void {
  const connection: WriterConnection = {
    db,
    sql: statementCache(db),
    bytes: 0,
    pendingSearchRows: [],
  };
  port.on('message', (message: ToWriter) => {
    accept(message);
    if (scheduled) return;
    scheduled = true;
    setImmediate(() => {
      scheduled = false;
      work(connection);
    });
  });
  send({ type: 'ready' });
}

function work(connection: WriterConnection): void {
  takePosted();
  copyWalIfAsked(connection.db);
  while (queue.length > 0) {
    commitGroup(connection);
    takePosted();
    copyWalIfAsked(connection.db);
  }
  if (closing) {
    connection.db.close();
    port.close();
  }
}

/**
 * One transaction: the queued writes up to the limits, each alone in a savepoint, then the
 * search-index rows of its inserts at the top level (one FTS5 segment a commit).
 */
function commitGroup(connection: WriterConnection): void {
  const { db } = connection;
  const replies: WriteReply[] = [];
  try {
    db.exec('BEGIN IMMEDIATE');
  } catch (error) {
    // The file is locked past the busy timeout, or gone: the writes that would have formed
    // this group fail alike (nothing was written); later ones try again.
    for (const request of takeGroupByItems()) replies.push(failed(request, error));
    send({ type: 'group', replies, committed: false });
    return;
  }
  connection.bytes = 0;
  connection.pendingSearchRows = [];
  let items = 0;
  const done: Array<{ request: WriteRequest; value: unknown }> = [];
  let lost: unknown;
  while (queue.length > 0) {
    const request = queue[0]!;
    if (done.length + replies.length > 0 && overLimits(items + request.items, connection.bytes)) {
      break;
    }
    queue.shift();
    items += request.items;
    if (needsPendingSearchRows(request.name)) {
      try {
        writePendingSearchRows(connection);
      } catch (error) {
        // Index rows half written at the top level: only the whole transaction can go.
        lost = error;
        rollback(db);
        replies.push(failed(request, error));
        break;
      }
    }
    try {
      done.push({ request, value: inSavepoint(connection, request) });
    } catch (error) {
      if (!db.inTransaction) {
        // SQLite rolled the whole transaction back (an I/O error, a full disk): the writes
        // done in it so far are undone too.
        lost = error;
        replies.push(failed(request, error));
        break;
      }
      replies.push(failed(request, error));
    }
  }
  if (lost === undefined) {
    try {
      writePendingSearchRows(connection);
      const started = performance.now();
      db.exec('COMMIT');
      const commitMs = performance.now() - started;
      for (const { request, value } of done) replies.push({ id: request.id, ok: true, value });
      send({ type: 'group', replies, committed: true, commitMs });
      return;
    } catch (error) {
      lost = error;
      rollback(db);
    }
  }
  for (const { request } of done) replies.push(failed(request, lost));
  send({ type: 'group', replies, committed: false });
}

/**
 * Between two transactions, so that nothing is being written: copies what the WAL holds into the
 * database file. With no read on the WAL (the checkpointer holds them), that is everything, and
 * the next transaction starts the WAL over. PASSIVE: it never waits for a read, nor blocks.
 */
function copyWalIfAsked(db: Database.Database): void {
  if (copiesAsked.length === 0) return;
  const ids = copiesAsked;
  copiesAsked = [];
  let copy = { busy: true, pages: -1, copied: -1 };
  try {
    const [row] = db.pragma('wal_checkpoint(PASSIVE)') as Array<{
      busy: number;
      log: number;
      checkpointed: number;
    }>;
    if (row) copy = { busy: row.busy !== 0, pages: row.log, copied: row.checkpointed };
  } catch {
    // Reported as busy: nothing known copied, the checkpointer tries again later.
  }
  for (const id of ids) send({ type: 'wal-copied', id, copy });
}

function inSavepoint(connection: WriterConnection, request: WriteRequest): unknown {
  const { db } = connection;
  const pending = connection.pendingSearchRows.length;
  db.exec('SAVEPOINT write');
  try {
    const operation = writeOperations[request.name] as (
      connection: WriterConnection,
      args: unknown,
    ) => unknown;
    const value = operation(connection, request.args);
    db.exec('RELEASE write');
    return value;
  } catch (error) {
    connection.pendingSearchRows.length = pending; // its rows were undone with it
    if (db.inTransaction) {
      try {
        db.exec('ROLLBACK TO write');
        db.exec('RELEASE write');
      } catch {
        // Its part cannot be undone alone: undo the whole transaction (reported as lost).
        rollback(db);
      }
    }
    throw error;
  }
}

function overLimits(items: number, bytes: number): boolean {
  return items > limits.maxItems || bytes >= limits.maxBytes;
}

function takeGroupByItems(): WriteRequest[] {
  let items = 0;
  let count = 0;
  while (count < queue.length && (count === 0 || !overLimits(items + queue[count]!.items, 0))) {
    items += queue[count]!.items;
    count += 1;
  }
  return queue.splice(0, count);
}

function rollback(db: Database.Database): void {
  // SQLite may have rolled back by itself (a full disk, an I/O error): then there is nothing to
  // roll back, and the original error is the one worth reporting.
  if (!db.inTransaction) return;
  try {
    db.exec('ROLLBACK');
  } catch {
    // keep the original error
  }
}

function failed(request: WriteRequest, error: unknown): WriteReply {
  return { id: request.id, ok: false, error: encodeError(error) };
}

/** The error as it crosses to the main thread, whose decodeError (sqlite-writer.ts) undoes it. */
function encodeError(error: unknown): EncodedError {
  const err = error instanceof Error ? error : new Error(String(error));
  const code =
    'code' in err && typeof err.code === 'string' && err.code.startsWith('SQLITE_')
      ? err.code
      : undefined;
  return {
    kind: classifySqliteError(err),
    name: err.name,
    message: err.message,
    ...(code ? { code } : {}),
  };
}

try {
  const db = openSqliteConnection(file, { busyTimeoutMs });
  // The checkpointer copies the WAL beside this thread (sqlite-checkpointer.ts) and gets it
  // started over past 16 MiB; this is only the safety net, should it ever fall behind. Above
  // what the WAL reaches while a relevance search over 1M items ends at half load (40-50 MB),
  // so that no commit runs a checkpoint itself (one that did took 90 ms and more).
  db.pragma(`wal_autocheckpoint = ${WRITER_OWN_CHECKPOINT_PAGES}`);
  start(db);
} catch (error) {
  send({ type: 'open-failed', error: encodeError(error) });
  port.close();
}
