/**
 * The writer thread: owns the only write connection to the file and runs every write of the
 * sqlite adapters (writeOperations, below). Writes queue here; each transaction takes what is
 * queued (up to the limits), runs each write in a savepoint of its own (one that throws is undone
 * alone), commits once and answers them all. While a commit fsyncs, the next writes queue in the
 * port, so a busier store commits bigger groups, and a write waits about one commit.
 * docs/adr/0011. This module is the worker's entry (sqlite-writer.ts starts it by its path) and
 * runs on load, so other modules import only its types.
 */
import { receiveMessageOnPort, workerData, type MessagePort } from 'node:worker_threads';
import type Database from 'libsql';
import type { ArchiveState } from '@screenfleet/contracts';
import type { ArchiveLeaseName } from './archive-state-store';
import type { NewContentDocument } from './content-store';
import type { NewEnrolmentCode, StoredToken } from './token-store';
import {
  deleteAuditRowsBefore,
  ensureAuditSchema,
  insertAuditRows,
  type AuditRowMs,
} from './sqlite.audit-schema';
import {
  acquireLease,
  archiveStateTables,
  ensureArchiveStateSchema,
  loadOrStoreState,
  releaseLease,
  saveState,
  updateState,
} from './sqlite.archive-state-schema';
import {
  contentRow,
  contentTables,
  deleteItemRows,
  deleteRangeRows,
  ensureContentSchema,
  type DeleteRangeMs,
  insertContentRow,
} from './sqlite.content-schema';
import {
  addDeadLetter,
  ensureDeadLettersSchema,
  removeDeadLetters,
  type NewDeadLetter,
} from './sqlite.dead-letters-schema';
import {
  counterAdditions,
  counterTables,
  ensureCounterSchema,
  forgetDevice,
  settleItemTimes,
  subtractDeleted,
  unarchive,
} from './sqlite.device-counters-schema';
import {
  enrolToken,
  ensureTokenSchema,
  insertCode,
  insertToken,
  recordLastUse,
  revokeCode,
  revokeToken,
  tokenTables,
  type TokenTableNames,
} from './sqlite.token-schema';
import { openSqliteConnection, statementCache, tableName } from './sqlite-connection';
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

const queue: WriteRequest[] = [];
let closing = false;
let scheduled = false;

function accept(message: ToWriter): void {
  if (message.type === 'close') closing = true;
  else queue.push(message);
}

/** Everything posted so far, at once: the writes that queued while the last commit ran. */
function takePosted(): void {
  for (let next = receiveMessageOnPort(port); next; next = receiveMessageOnPort(port)) {
    accept(next.message as ToWriter);
  }
}

function start(db: Database.Database): void {
  const connection: WriterConnection = { db, sql: statementCache(db), bytes: 0 };
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
  while (queue.length > 0) {
    commitGroup(connection);
    takePosted();
  }
  if (closing) {
    connection.db.close();
    port.close();
  }
}

/** One transaction: the queued writes up to the limits, each alone in a savepoint. */
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
      db.exec('COMMIT');
      for (const { request, value } of done) replies.push({ id: request.id, ok: true, value });
      send({ type: 'group', replies, committed: true });
      return;
    } catch (error) {
      lost = error;
      rollback(db);
    }
  }
  for (const { request } of done) replies.push(failed(request, lost));
  send({ type: 'group', replies, committed: false });
}

function inSavepoint(connection: WriterConnection, request: WriteRequest): unknown {
  const { db } = connection;
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

/** What a write operation gets in the writer thread: the write connection, inside a transaction. */
export interface WriterConnection {
  db: Database.Database;
  /** The connection's prepared statements, by SQL text. */
  sql: (text: string) => Database.Statement;
  /** Bytes of documents written in this transaction so far (the group's byte bound). */
  bytes: number;
}

interface StateTables {
  table: string;
  leaseTable: string;
}

/**
 * Every write of the sqlite adapters, by name: what the writer thread runs, each in a savepoint
 * of its group's transaction, so one that throws is undone alone. The adapters send a name and
 * its arguments (structured-cloned: Dates stay Dates). A write that belongs with an item batch
 * (per-device counters, say) goes into that batch's operation, so it commits with the items.
 */
export const writeOperations = {
  /** The write connection's settings, as SQLite reports them (what a status or a test checks). */
  'connection.settings': ({ db }: WriterConnection, _args: Record<string, never>) => {
    const setting = (name: string) => {
      const [row] = db.pragma(name) as Array<Record<string, unknown>>;
      return Object.values(row ?? {})[0];
    };
    return {
      journalMode: setting('journal_mode') as string,
      synchronous: setting('synchronous') as number,
      busyTimeoutMs: setting('busy_timeout') as number,
    };
  },

  'content.schema': ({ db, sql }: WriterConnection, { table }: { table: string }) => {
    const tables = contentTables(table);
    ensureContentSchema(db, sql, tables);
    ensureCounterSchema(db, sql, tables.table, counterTables(table));
  },

  /**
   * Returns how many were inserted (the others were stored before). The rows are made here, in
   * this thread (JSON, words: a third of an insert's work), not on the caller's event loop.
   */
  'content.insert': (
    connection: WriterConnection,
    { table, docs, restored }: { table: string; docs: NewContentDocument[]; restored?: boolean },
  ) => {
    const tables = contentTables(table);
    // The device counters of the items newly stored, in the same savepoint: a redelivered item
    // (not inserted) is not counted, and items and counts commit or roll back together.
    const counts = counterAdditions();
    const byDevice = new Map<string, number>();
    let inserted = 0;
    for (const doc of docs) {
      const row = contentRow(doc);
      connection.bytes += row.document.length;
      if (insertContentRow(connection.sql, tables, row) === 1) {
        inserted += 1;
        counts.add(doc);
        if (restored) byDevice.set(doc.device_name, (byDevice.get(doc.device_name) ?? 0) + 1);
      }
    }
    counts.flush(connection.sql, counterTables(table));
    unarchive(connection.sql, counterTables(table), byDevice);
    return inserted;
  },

  /** Deletes the items and subtracts them from their devices' counters, in one savepoint. */
  'content.delete': (
    { sql }: WriterConnection,
    { table, ids, archived }: { table: string; ids: string[]; archived: boolean },
  ) => {
    const tables = contentTables(table);
    subtractDeleted(sql, tables.table, counterTables(table), JSON.stringify(ids), archived);
    return deleteItemRows(sql, tables, ids);
  },

  'content.forgetDevice': (
    { sql }: WriterConnection,
    { table, device }: { table: string; device: string },
  ) => forgetDevice(sql, contentTables(table).table, counterTables(table), device),

  /**
   * One bounded chunk of a delete (ContentStore.deleteRange); its items are subtracted from
   * their devices' counters, and those devices' item times settled, in the same savepoint.
   */
  'content.deleteRange': (
    { sql }: WriterConnection,
    { table, range, limit }: { table: string; range: DeleteRangeMs; limit: number },
  ) => {
    const tables = contentTables(table);
    const counters = counterTables(table);
    const deleted = deleteRangeRows(sql, tables, range, limit, (ids) =>
      subtractDeleted(sql, tables.table, counters, JSON.stringify(ids), false),
    );
    settleItemTimes(sql, tables.table, counters, deleted.counts);
    return deleted;
  },

  'archiveState.schema': ({ db }: WriterConnection, t: StateTables) =>
    ensureArchiveStateSchema(db, archiveStateTables(t.table, t.leaseTable)),

  'archiveState.loadOrStore': (
    { sql }: WriterConnection,
    { initial, ...t }: StateTables & { initial: ArchiveState },
  ) => loadOrStoreState(sql, archiveStateTables(t.table, t.leaseTable), initial),

  'archiveState.save': (
    { sql }: WriterConnection,
    { state, ...t }: StateTables & { state: ArchiveState },
  ) => saveState(sql, archiveStateTables(t.table, t.leaseTable), state),

  'archiveState.update': (
    { sql }: WriterConnection,
    { fields, ...t }: StateTables & { fields: Partial<ArchiveState> },
  ) => updateState(sql, archiveStateTables(t.table, t.leaseTable), fields),

  'archiveState.acquireLease': (
    { sql }: WriterConnection,
    {
      lease,
      ...t
    }: StateTables & {
      lease: { holder: string; ttlMs: number; nowMs: number; lease: ArchiveLeaseName };
    },
  ) => acquireLease(sql, archiveStateTables(t.table, t.leaseTable), lease),

  'archiveState.releaseLease': (
    { sql }: WriterConnection,
    { lease, ...t }: StateTables & { lease: { holder: string; lease: ArchiveLeaseName } },
  ) => releaseLease(sql, archiveStateTables(t.table, t.leaseTable), lease),

  'deadLetters.schema': ({ db }: WriterConnection, { table }: { table: string }) =>
    ensureDeadLettersSchema(db, tableName(table, 'table')),

  'deadLetters.add': (
    { sql }: WriterConnection,
    { table, letter }: { table: string; letter: NewDeadLetter },
  ) => addDeadLetter(sql, tableName(table, 'table'), letter),

  'deadLetters.remove': (
    { sql }: WriterConnection,
    { table, seqs }: { table: string; seqs: number[] },
  ) => removeDeadLetters(sql, tableName(table, 'table'), seqs),

  // Tokens and enrolment codes (sqlite.token-schema.ts): each check and the write it allows in
  // one savepoint. A taken id or hash is an answer, not an error (the adapter says which).
  'tokens.schema': ({ db }: WriterConnection, names: TokenTableNames) =>
    ensureTokenSchema(db, tokenTables(names)),

  'tokens.insertToken': (
    { sql }: WriterConnection,
    { token, ...names }: TokenTableNames & { token: StoredToken },
  ) => insertToken(sql, tokenTables(names), token),

  'tokens.revokeToken': (
    { sql }: WriterConnection,
    { id, atMs, ...names }: TokenTableNames & { id: string; atMs: number },
  ) => revokeToken(sql, tokenTables(names), id, atMs),

  'tokens.recordLastUse': (
    { sql }: WriterConnection,
    { uses, ...names }: TokenTableNames & { uses: Array<{ id: string; atMs: number }> },
  ) => recordLastUse(sql, tokenTables(names), uses),

  'tokens.insertCode': (
    { sql }: WriterConnection,
    { code, ...names }: TokenTableNames & { code: NewEnrolmentCode },
  ) => insertCode(sql, tokenTables(names), code),

  'tokens.revokeCode': (
    { sql }: WriterConnection,
    { id, atMs, ...names }: TokenTableNames & { id: string; atMs: number },
  ) => revokeCode(sql, tokenTables(names), id, atMs),

  'tokens.enrol': (
    { sql }: WriterConnection,
    {
      enrol,
      ...names
    }: TokenTableNames & {
      enrol: { codeId: string; atMs: number; token: StoredToken };
    },
  ) => enrolToken(sql, tokenTables(names), enrol),

  // Audit rows (sqlite.audit-schema.ts): insert-only, a stored id kept as it is.
  'audit.schema': ({ db }: WriterConnection, { table }: { table: string }) =>
    ensureAuditSchema(db, table),

  /** Returns how many were inserted (the others were stored before). */
  'audit.insert': (
    connection: WriterConnection,
    { table, rows }: { table: string; rows: AuditRowMs[] },
  ) => {
    for (const row of rows) connection.bytes += row.details.length;
    return insertAuditRows(connection.sql, table, rows);
  },

  'audit.deleteBefore': (
    { sql }: WriterConnection,
    { table, cutoffMs, limit }: { table: string; cutoffMs: number; limit: number },
  ) => deleteAuditRowsBefore(sql, table, { cutoffMs, limit }),
};

export type WriteOperations = typeof writeOperations;
export type WriteName = keyof WriteOperations;
export type WriteArgs<N extends WriteName> = Parameters<WriteOperations[N]>[1];
export type WriteResult<N extends WriteName> = ReturnType<WriteOperations[N]>;

try {
  const db = openSqliteConnection(file, { busyTimeoutMs });
  // The checkpointer copies the WAL beside this thread (sqlite-checkpointer.ts); this is only
  // the safety net, should it ever fall behind (10,000 pages: 40 MB of WAL).
  db.pragma('wal_autocheckpoint = 10000');
  start(db);
} catch (error) {
  send({ type: 'open-failed', error: encodeError(error) });
  port.close();
}
