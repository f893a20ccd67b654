import type { ArchiveState } from '@screenfleet/contracts';
import type { ArchiveStateStore } from './archive-state-store';
import { databaseFor, type SqliteDatabase } from './sqlite-database';
import { sqliteStoreAccess } from './sqlite-store-access';
import { fromJson } from './sqlite-json';
import {
  archiveStateTables,
  holderAt,
  leaseQuery,
  storedStateQuery,
  type LeaseRow,
} from './sqlite.archive-state-schema';

export interface SqliteArchiveStateStoreOptions {
  /** A database shared with other stores (openSqliteDatabase); close() leaves it open. */
  database?: SqliteDatabase;
  /** Or a file this store opens on first use and closes on close(). */
  file?: string;
  /** Holds the one state row. */
  table?: string;
  /** Holds the worker lease's row; the task lease's is in `<leaseTable>_task`. */
  leaseTable?: string;
}

/**
 * ArchiveStateStore in two SQLite tables, for the embedded mode. The state is one row holding the
 * ArchiveState as JSON (Dates tagged, so they come back as Dates, in fields added later too); the
 * lease is one row (holder, expires_at). What the Mongo adapter builds from insert-only documents
 * (FerretDB has no atomic read-modify-write) is here a plain read-decide-write run by the writer
 * thread inside its transaction (sqlite.archive-state-schema.ts): the write lock is held from the
 * read on, so no other connection to the file can act between them, and each update lands whole
 * or not at all. Reads of the state go to a reader connection.
 */
export function createSqliteArchiveStateStore(
  options: SqliteArchiveStateStoreOptions,
): ArchiveStateStore {
  const source = databaseFor(options, 'archive state store');
  const names = {
    table: options.table ?? 'archive_state',
    leaseTable: options.leaseTable ?? 'archive_lease',
  };
  const tables = archiveStateTables(names.table, names.leaseTable);

  const translated = sqliteStoreAccess(
    source,
    { write: 'archiveState.schema', args: names },
    'archive state store',
  ).run;

  async function storedState({ readers }: SqliteDatabase): Promise<ArchiveState | undefined> {
    const { text, params } = storedStateQuery(tables);
    const [row] = await readers.query<{ state: string }>(text, params);
    return row ? fromJson<ArchiveState>(row.state) : undefined;
  }

  return {
    load: (initial) =>
      translated(
        'load',
        // Read first (a reader); only an empty place takes the writer, and there a second
        // worker that was just as quick finds the first one's state and returns it.
        async (database) =>
          (await storedState(database)) ??
          (await database.writer.write('archiveState.loadOrStore', { ...names, initial })),
      ),

    save: (state) =>
      translated('save', ({ writer }) => writer.write('archiveState.save', { ...names, state })),

    update: (fields) =>
      translated('update', ({ writer }) =>
        writer.write('archiveState.update', { ...names, fields }),
      ),

    acquireLease: (holder, ttlMs, now, lease = 'worker') =>
      translated('acquireLease', ({ writer }) =>
        writer.write('archiveState.acquireLease', {
          ...names,
          lease: { holder, ttlMs, nowMs: now.getTime(), lease },
        }),
      ),

    releaseLease: (holder, lease = 'worker') =>
      translated('releaseLease', ({ writer }) =>
        writer.write('archiveState.releaseLease', { ...names, lease: { holder, lease } }),
      ),

    leaseHolder: (now, lease = 'worker') =>
      translated('leaseHolder', async ({ readers }) => {
        const { text, params } = leaseQuery(tables, lease);
        const [row] = await readers.query<LeaseRow>(text, params);
        return holderAt(row, now.getTime());
      }),

    close: () => source.close(),
  };
}
