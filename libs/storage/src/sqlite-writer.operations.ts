/**
 * Every write of the sqlite adapters, by name (writeOperations): what the writer thread
 * (sqlite-writer.thread.ts) runs, each in a savepoint of its group's transaction. Apart from the
 * thread so that the loop side (sqlite-writer.ts) can name the writes' types without the thread
 * importing it back.
 */
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
  insertSearchRows,
  type SearchIndexRow,
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
import { tableName } from './sqlite-connection';

/** What a write operation gets in the writer thread: the write connection, inside a transaction. */
export interface WriterConnection {
  db: Database.Database;
  /** The connection's prepared statements, by SQL text. */
  sql: (text: string) => Database.Statement;
  /** Bytes of documents written in this transaction so far (the group's byte bound). */
  bytes: number;
  /**
   * The search-index rows of this transaction's item inserts so far, written at its top level
   * (writePendingSearchRows): FTS5 writes what it holds pending as a new segment at every
   * savepoint, so rows written in each batch's own savepoint cost a segment a batch.
   */
  pendingSearchRows: Array<{ search: string; row: SearchIndexRow }>;
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
      const seq = insertContentRow(connection.sql, tables, row);
      if (seq !== undefined) {
        connection.pendingSearchRows.push({
          search: tables.search,
          row: { seq, words: row.search },
        });
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

/**
 * Whether a write may read or delete search-index rows, so that the rows pending (of inserts
 * earlier in its transaction) must be written before it runs: the content tables' writes other
 * than the insert, which only adds to them.
 */
export function needsPendingSearchRows(name: string): boolean {
  return name.startsWith('content.') && name !== 'content.insert';
}

/**
 * Writes the pending search-index rows, at the transaction's top level (no savepoint open): one
 * FTS5 segment for all of them. A failed write's rows were dropped with its savepoint (the
 * thread cuts the list back), so only stored items are indexed, in the same commit.
 */
export function writePendingSearchRows(connection: WriterConnection): void {
  const bySearch = new Map<string, SearchIndexRow[]>();
  for (const { search, row } of connection.pendingSearchRows.splice(0)) {
    const rows = bySearch.get(search) ?? [];
    if (rows.length === 0) bySearch.set(search, rows);
    rows.push(row);
  }
  for (const [search, rows] of bySearch) insertSearchRows(connection.sql, search, rows);
}

export type WriteOperations = typeof writeOperations;
export type WriteName = keyof WriteOperations;
export type WriteArgs<N extends WriteName> = Parameters<WriteOperations[N]>[1];
export type WriteResult<N extends WriteName> = ReturnType<WriteOperations[N]>;
