import type { ArchiveState } from '@screenfleet/contracts';
import type { ArchiveLeaseName, ArchiveStateStore } from './archive-state-store';
import {
  databaseFor,
  immediateTransaction,
  statementCache,
  tableName,
  type SqliteDatabase,
} from './sqlite-database';
import { fromJson, toJson } from './sqlite-json';
import { toStoreError } from './store-errors';

export interface SqliteArchiveStateStoreOptions {
  /** A database shared with other stores (see openSqliteDatabase); close() leaves it open. */
  database?: SqliteDatabase;
  /** Or a file this store opens itself and closes on close(). */
  file?: string;
  /** Holds the one state row. */
  table?: string;
  /** Holds the worker lease's row; the task lease's is in `<leaseTable>_task`. */
  leaseTable?: string;
}

const STATE_ID = 'state';
const LEASE_ID = 1;

interface LeaseRow {
  holder: string | null;
  expires_at_ms: number;
}

/**
 * ArchiveStateStore in two SQLite tables, for the embedded mode. The state is one row holding the
 * ArchiveState as JSON (Dates tagged, so they come back as Dates, in fields added later too); the
 * lease is one row (holder, expires_at). What the Mongo adapter builds from insert-only documents
 * (FerretDB has no atomic read-modify-write) is here a plain read-decide-write inside one
 * BEGIN IMMEDIATE transaction: the write lock is held from the read on, so no other connection
 * to the file can act between them, and each update lands whole or not at all.
 */
export function createSqliteArchiveStateStore(
  options: SqliteArchiveStateStoreOptions,
): ArchiveStateStore {
  const { database, owned } = databaseFor(options, 'archive state store');
  const { db } = database;
  const states = tableName(options.table ?? 'archive_state', 'table');
  const leaseTable = options.leaseTable ?? 'archive_lease';
  const leases: Record<ArchiveLeaseName, string> = {
    worker: tableName(leaseTable, 'leaseTable'),
    task: tableName(`${leaseTable}_task`, 'leaseTable'),
  };
  const sql = statementCache(db);

  const leaseSchema = (table: string) => `
    CREATE TABLE IF NOT EXISTS ${table} (
      id INTEGER PRIMARY KEY CHECK (id = ${LEASE_ID}),
      holder TEXT,
      expires_at_ms INTEGER NOT NULL
    );`;
  const schema = `
    CREATE TABLE IF NOT EXISTS ${states} (id TEXT PRIMARY KEY NOT NULL, state TEXT NOT NULL);
    ${leaseSchema(leases.worker)}
    ${leaseSchema(leases.task)}`;
  let schemaReady = false;

  /** Runs `run` now (the API is synchronous), settling with its result or the port's error. */
  function translated<T>(operation: string, run: () => T): Promise<T> {
    return new Promise<T>((resolve) => {
      if (!schemaReady) {
        immediateTransaction(db, () => db.exec(schema));
        schemaReady = true;
      }
      resolve(run());
    }).catch((error: unknown) => {
      throw toStoreError(error, operation, 'archive state store');
    });
  }

  function storedState(): ArchiveState | undefined {
    const row = sql(`SELECT state FROM ${states} WHERE id = ?`).get(STATE_ID) as
      { state: string } | undefined;
    return row ? fromJson<ArchiveState>(row.state) : undefined;
  }

  function writeState(state: ArchiveState): void {
    sql(
      `INSERT INTO ${states} (id, state) VALUES (?, ?)
       ON CONFLICT (id) DO UPDATE SET state = excluded.state`,
    ).run(STATE_ID, toJson(state));
  }

  function currentLease(lease: ArchiveLeaseName): LeaseRow | undefined {
    return sql(`SELECT holder, expires_at_ms FROM ${leases[lease]} WHERE id = ?`).get(LEASE_ID) as
      LeaseRow | undefined;
  }

  function writeLease(lease: ArchiveLeaseName, holder: string | null, expiresAtMs: number): void {
    sql(
      `INSERT INTO ${leases[lease]} (id, holder, expires_at_ms) VALUES (?, ?, ?)
       ON CONFLICT (id) DO UPDATE SET holder = excluded.holder, expires_at_ms = excluded.expires_at_ms`,
    ).run(LEASE_ID, holder, expiresAtMs);
  }

  return {
    load: (initial) =>
      translated(
        'load',
        () =>
          // Read first (no write lock); only an empty place takes it, and there a second reader
          // that was just as quick finds the first one's state and returns it.
          storedState() ??
          immediateTransaction(db, () => {
            const stored = storedState();
            if (stored) return stored;
            writeState(initial);
            return storedState()!;
          }),
      ),

    save: (state) => translated('save', () => immediateTransaction(db, () => writeState(state))),

    update: (fields) =>
      translated('update', () =>
        immediateTransaction(db, () => {
          const stored = storedState();
          if (!stored) {
            throw new Error(
              'no archive state to update: load (which stores the initial one) first',
            );
          }
          const values = Object.entries(fields).filter(([, value]) => value !== undefined);
          writeState({ ...stored, ...Object.fromEntries(values) });
        }),
      ),

    acquireLease: (holder, ttlMs, now, lease = 'worker') =>
      translated('acquireLease', () =>
        immediateTransaction(db, () => {
          // The compare-and-swap: free (never taken, released, or expired: expires_at before
          // now) or already ours -> ours until now + ttl; anyone else's -> refused.
          const current = currentLease(lease);
          const free = !current || current.holder === null || current.expires_at_ms < now.getTime();
          if (!free && current.holder !== holder) return false;
          writeLease(lease, holder, now.getTime() + ttlMs);
          return true;
        }),
      ),

    releaseLease: (holder, lease = 'worker') =>
      translated('releaseLease', () =>
        immediateTransaction(db, () => {
          // Not ours (any more): nothing to give up.
          if (currentLease(lease)?.holder !== holder) return;
          writeLease(lease, null, 0);
        }),
      ),

    leaseHolder: (now, lease = 'worker') =>
      translated('leaseHolder', () => {
        const current = currentLease(lease);
        return current && current.expires_at_ms >= now.getTime() ? current.holder : null;
      }),

    close: () => {
      if (owned) database.close();
      return Promise.resolve();
    },
  };
}
