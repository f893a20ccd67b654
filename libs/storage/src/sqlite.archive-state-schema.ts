import type { ArchiveState } from '@screenfleet/contracts';
import type Database from 'libsql';
import type { ArchiveLeaseName } from './archive-state-store';
import { tableName } from './sqlite-connection';
import { fromJson, toJson } from './sqlite-json';

type Statements = (sql: string) => Database.Statement;

/** The archive state's tables (the state, and one per lease), checked and quoted for SQL text. */
export interface ArchiveStateTables {
  states: string;
  leases: Record<ArchiveLeaseName, string>;
}

export function archiveStateTables(table: string, leaseTable: string): ArchiveStateTables {
  return {
    states: tableName(table, 'table'),
    leases: {
      worker: tableName(leaseTable, 'leaseTable'),
      task: tableName(`${leaseTable}_task`, 'leaseTable'),
    },
  };
}

const STATE_ID = 'state';
const LEASE_ID = 1;

export interface LeaseRow {
  holder: string | null;
  expires_at_ms: number;
}

export function ensureArchiveStateSchema(db: Database.Database, t: ArchiveStateTables): void {
  const leaseSchema = (table: string) => `
    CREATE TABLE IF NOT EXISTS ${table} (
      id INTEGER PRIMARY KEY CHECK (id = ${LEASE_ID}),
      holder TEXT,
      expires_at_ms INTEGER NOT NULL
    );`;
  db.exec(`
    CREATE TABLE IF NOT EXISTS ${t.states} (id TEXT PRIMARY KEY NOT NULL, state TEXT NOT NULL);
    ${leaseSchema(t.leases.worker)}
    ${leaseSchema(t.leases.task)}`);
}

/** The stored state's row as SQL text and parameters, for a reader connection. */
export function storedStateQuery(t: ArchiveStateTables): { text: string; params: string[] } {
  return { text: `SELECT state FROM ${t.states} WHERE id = ?`, params: [STATE_ID] };
}

/** A lease's row as SQL text and parameters, for a reader connection. */
export function leaseQuery(
  t: ArchiveStateTables,
  lease: ArchiveLeaseName,
): { text: string; params: number[] } {
  return {
    text: `SELECT holder, expires_at_ms FROM ${t.leases[lease]} WHERE id = ?`,
    params: [LEASE_ID],
  };
}

// What follows runs in the writer thread, inside its transaction: the write lock is held from
// the read on, so a read-decide-write cannot be overtaken by another connection or process, and
// each one lands whole or not at all (its own savepoint).

function storedState(sql: Statements, t: ArchiveStateTables): ArchiveState | undefined {
  const { text, params } = storedStateQuery(t);
  const row = sql(text).get(...params) as { state: string } | undefined;
  return row ? fromJson<ArchiveState>(row.state) : undefined;
}

function writeState(sql: Statements, t: ArchiveStateTables, state: ArchiveState): void {
  sql(
    `INSERT INTO ${t.states} (id, state) VALUES (?, ?)
     ON CONFLICT (id) DO UPDATE SET state = excluded.state`,
  ).run(STATE_ID, toJson(state));
}

function currentLease(
  sql: Statements,
  t: ArchiveStateTables,
  lease: ArchiveLeaseName,
): LeaseRow | undefined {
  const { text, params } = leaseQuery(t, lease);
  return sql(text).get(...params) as LeaseRow | undefined;
}

function writeLease(
  sql: Statements,
  t: ArchiveStateTables,
  lease: ArchiveLeaseName,
  holder: string | null,
  expiresAtMs: number,
): void {
  sql(
    `INSERT INTO ${t.leases[lease]} (id, holder, expires_at_ms) VALUES (?, ?, ?)
     ON CONFLICT (id) DO UPDATE SET holder = excluded.holder, expires_at_ms = excluded.expires_at_ms`,
  ).run(LEASE_ID, holder, expiresAtMs);
}

/** Who holds the lease at `nowMs` (not expired), or null. */
export function holderAt(row: LeaseRow | undefined, nowMs: number): string | null {
  return row && row.expires_at_ms >= nowMs ? row.holder : null;
}

/** The stored state, or `initial` stored now when there is none (another writer may have been first). */
export function loadOrStoreState(
  sql: Statements,
  t: ArchiveStateTables,
  initial: ArchiveState,
): ArchiveState {
  const stored = storedState(sql, t);
  if (stored) return stored;
  writeState(sql, t, initial);
  return storedState(sql, t)!;
}

export function saveState(sql: Statements, t: ArchiveStateTables, state: ArchiveState): void {
  writeState(sql, t, state);
}

/** Lays the defined fields over the stored state; rejects when nothing is stored. */
export function updateState(
  sql: Statements,
  t: ArchiveStateTables,
  fields: Partial<ArchiveState>,
): void {
  const stored = storedState(sql, t);
  if (!stored) {
    throw new Error('no archive state to update: load (which stores the initial one) first');
  }
  const values = Object.entries(fields).filter(([, value]) => value !== undefined);
  writeState(sql, t, { ...stored, ...Object.fromEntries(values) });
}

export function acquireLease(
  sql: Statements,
  t: ArchiveStateTables,
  {
    holder,
    ttlMs,
    nowMs,
    lease,
  }: { holder: string; ttlMs: number; nowMs: number; lease: ArchiveLeaseName },
): boolean {
  // The compare-and-swap: free (never taken, released, or expired: expires_at before now) or
  // already ours -> ours until now + ttl; anyone else's -> refused.
  const current = currentLease(sql, t, lease);
  const free = !current || current.holder === null || current.expires_at_ms < nowMs;
  if (!free && current.holder !== holder) return false;
  writeLease(sql, t, lease, holder, nowMs + ttlMs);
  return true;
}

export function releaseLease(
  sql: Statements,
  t: ArchiveStateTables,
  { holder, lease }: { holder: string; lease: ArchiveLeaseName },
): void {
  // Not ours (any more): nothing to give up.
  if (currentLease(sql, t, lease)?.holder !== holder) return;
  writeLease(sql, t, lease, null, 0);
}
