import {
  auditPage,
  checkAuditLimit,
  checkAuditRows,
  MAX_AUDIT_PAGE,
  type AuditStore,
} from './audit-store';
import { tableName } from './sqlite-connection';
import { databaseFor, type SqliteDatabase } from './sqlite-database';
import { sqliteStoreAccess } from './sqlite-store-access';
import { auditPageQuery, auditRowMs, auditRowsOf } from './sqlite.audit-schema';

export interface SqliteAuditStoreOptions {
  /** A database shared with other stores (openSqliteDatabase); close() leaves it open. */
  database?: SqliteDatabase;
  /** Or a file this store opens on first use and closes on close(). */
  file?: string;
  table?: string;
}

/**
 * AuditStore in one table of the embedded mode's SQLite file (sqlite.audit-schema.ts). Inserts
 * and deletes are writer-thread operations (`audit.*`); a page is one statement on a reader
 * connection.
 */
export function createSqliteAuditStore(options: SqliteAuditStoreOptions): AuditStore {
  const source = databaseFor(options, 'audit store');
  const table = options.table ?? 'audit';
  tableName(table, 'table'); // refused here, at creation, rather than on every call

  const translated = sqliteStoreAccess(
    source,
    { write: 'audit.schema', args: { table } },
    'audit store',
  ).run;

  return {
    ensureSchema: () => translated('ensureSchema', () => Promise.resolve()),

    insertRows: (rows) =>
      translated('insertRows', async ({ writer }) => {
        checkAuditRows(rows);
        if (rows.length === 0) return { inserted: 0, alreadyStored: 0 };
        const inserted = await writer.write(
          'audit.insert',
          { table, rows: rows.map(auditRowMs) },
          rows.length,
        );
        return { inserted, alreadyStored: rows.length - inserted };
      }),

    query: ({ limit, ...filters }) =>
      translated('query', async ({ readers }) => {
        checkAuditLimit(limit, MAX_AUDIT_PAGE);
        const { text, params } = auditPageQuery(table, filters, limit + 1);
        const [row] = await readers.query<{ rows: string }>(text, params);
        return auditPage(auditRowsOf(row!.rows), limit);
      }),

    deleteOlderThan: (cutoff, { limit }) =>
      translated('deleteOlderThan', ({ writer }) =>
        writer.write('audit.deleteBefore', {
          table,
          cutoffMs: cutoff.getTime(),
          limit: checkAuditLimit(limit),
        }),
      ),

    close: () => source.close(),
  };
}
