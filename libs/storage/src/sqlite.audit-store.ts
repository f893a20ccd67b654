import {
  auditPage,
  checkAuditLimit,
  checkAuditRows,
  MAX_AUDIT_PAGE,
  type AuditStore,
} from './audit-store';
import { tableName } from './sqlite-connection';
import { databaseFor, type SqliteDatabase } from './sqlite-database';
import { auditPageQuery, auditRowMs, auditRowsOf } from './sqlite.audit-schema';
import { toStoreError } from './store-errors';

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

  let schema: Promise<void> | undefined;
  function ensureSchema({ writer }: SqliteDatabase): Promise<void> {
    schema ??= writer.write('audit.schema', { table }).catch((error: unknown) => {
      schema = undefined;
      throw error;
    });
    return schema;
  }

  /** Runs `run` once the table is there, rejecting with the port's errors. */
  async function translated<T>(
    operation: string,
    run: (database: SqliteDatabase) => Promise<T>,
  ): Promise<T> {
    try {
      const database = await source.open();
      await ensureSchema(database);
      return await run(database);
    } catch (error) {
      throw toStoreError(error, operation, 'audit store');
    }
  }

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
