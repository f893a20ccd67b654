import type Database from 'libsql';
import { tableName } from './sqlite-connection';
import { auditCursorPosition, type AuditQuery, type AuditRow } from './audit-store';

type Statements = (sql: string) => Database.Statement;

// Each function takes the table's name as the adapter was given it (checked and quoted here).

/**
 * `at` in ms since the epoch, details as JSON text. The indexes serve the newest-first keyset
 * query (walked backwards) alone and with each filter, and the retention's oldest-first delete;
 * the id is in each so that ties on `at` are ordered by the index too.
 */
export function ensureAuditSchema(db: Database.Database, name: string): void {
  const table = tableName(name, 'table');
  db.exec(`
    CREATE TABLE IF NOT EXISTS ${table} (
      id TEXT PRIMARY KEY NOT NULL,
      at_ms INTEGER NOT NULL,
      actor TEXT NOT NULL,
      action TEXT NOT NULL,
      device TEXT,
      outcome TEXT NOT NULL CHECK (outcome IN ('ok', 'refused', 'failed')),
      outcome_code TEXT,
      duration_ms REAL,
      details TEXT NOT NULL
    );
    CREATE INDEX IF NOT EXISTS "${name}_at" ON ${table} (at_ms, id);
    CREATE INDEX IF NOT EXISTS "${name}_device_at" ON ${table} (device, at_ms, id);
    CREATE INDEX IF NOT EXISTS "${name}_actor_at" ON ${table} (actor, at_ms, id);
    CREATE INDEX IF NOT EXISTS "${name}_action_at" ON ${table} (action, at_ms, id);`);
}

/** A row as it crosses to the writer thread and back: Dates as ms, details as JSON text. */
export interface AuditRowMs {
  id: string;
  at_ms: number;
  actor: string;
  action: string;
  device: string | null;
  outcome: AuditRow['outcome'];
  outcome_code: string | null;
  duration_ms: number | null;
  details: string;
}

export function auditRowMs(row: AuditRow): AuditRowMs {
  return {
    id: row.id,
    at_ms: row.at.getTime(),
    actor: row.actor,
    action: row.action,
    device: row.device,
    outcome: row.outcome,
    outcome_code: row.outcomeCode,
    duration_ms: row.durationMs,
    details: JSON.stringify(row.details),
  };
}

/**
 * A page as SQL text and parameters for a reader connection: one row, `rows` a JSON array of
 * at most `take` rows, newest first. The text has only the filters given (so each use picks
 * its index); `(at_ms, id) < (?, ?)` is the keyset, which SQLite seeks in the index.
 */
export function auditPageQuery(
  name: string,
  query: Omit<AuditQuery, 'limit'>,
  take: number,
): { text: string; params: unknown[] } {
  const where: string[] = [];
  const params: unknown[] = [];
  for (const column of ['device', 'actor', 'action'] as const) {
    const value = query[column];
    if (value === undefined) continue;
    where.push(`${column} = ?`);
    params.push(value);
  }
  if (query.from) {
    where.push('at_ms >= ?');
    params.push(query.from.getTime());
  }
  if (query.to) {
    where.push('at_ms < ?');
    params.push(query.to.getTime());
  }
  if (query.cursor !== undefined) {
    const after = auditCursorPosition(query.cursor);
    where.push('(at_ms, id) < (?, ?)');
    params.push(after.atMs, after.id);
  }
  params.push(take);
  const table = tableName(name, 'table');
  return {
    text: `SELECT json_group_array(json(row) ORDER BY at_ms DESC, id DESC) AS rows FROM (
             SELECT at_ms, id, json_object('id', id, 'at_ms', at_ms, 'actor', actor,
               'action', action, 'device', device, 'outcome', outcome,
               'outcome_code', outcome_code, 'duration_ms', duration_ms,
               'details', json(details)) AS row
             FROM ${table} ${where.length > 0 ? `WHERE ${where.join(' AND ')}` : ''}
             ORDER BY at_ms DESC, id DESC LIMIT ?)`,
    params,
  };
}

export function auditRowsOf(rows: string): AuditRow[] {
  return (
    JSON.parse(rows) as Array<Omit<AuditRowMs, 'details'> & { details: AuditRow['details'] }>
  ).map((row) => ({
    id: row.id,
    at: new Date(row.at_ms),
    actor: row.actor,
    action: row.action,
    device: row.device,
    outcome: row.outcome,
    outcomeCode: row.outcome_code,
    durationMs: row.duration_ms,
    details: row.details,
  }));
}

// What follows runs in the writer thread, inside its transaction.

/** Inserts the rows whose id is not stored yet; returns how many it inserted. */
export function insertAuditRows(sql: Statements, name: string, rows: AuditRowMs[]): number {
  const table = tableName(name, 'table');
  // ON CONFLICT (id) rather than INSERT OR IGNORE, which would also skip a row breaking NOT
  // NULL or the outcome's CHECK and count it as stored.
  const insert = sql(
    `INSERT INTO ${table} (id, at_ms, actor, action, device, outcome, outcome_code, duration_ms,
       details) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING`,
  );
  let inserted = 0;
  for (const row of rows) {
    inserted += insert.run(
      row.id,
      row.at_ms,
      row.actor,
      row.action,
      row.device,
      row.outcome,
      row.outcome_code,
      row.duration_ms,
      row.details,
    ).changes;
  }
  return inserted;
}

/** Deletes at most `limit` rows before the cutoff, oldest first; returns how many. */
export function deleteAuditRowsBefore(
  sql: Statements,
  name: string,
  { cutoffMs, limit }: { cutoffMs: number; limit: number },
): number {
  const table = tableName(name, 'table');
  return sql(
    `DELETE FROM ${table} WHERE id IN (
       SELECT id FROM ${table} WHERE at_ms < ? ORDER BY at_ms, id LIMIT ?)`,
  ).run(cutoffMs, limit).changes;
}
