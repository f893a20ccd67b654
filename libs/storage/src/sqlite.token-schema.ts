import type Database from 'libsql';
import { tableName } from './sqlite-connection';
import {
  enrolRefusal,
  type EnrolmentCode,
  type EnrolRefusal,
  type NewEnrolmentCode,
  type StoredToken,
  type TokenRateLimits,
} from './token-store';

type Statements = (sql: string) => Database.Statement;

/** The names a token store is opened with, as they cross to the writer thread. */
export interface TokenTableNames {
  tokensTable: string;
  codesTable: string;
}

/** The same, checked and ready for SQL text. */
interface TokenTables {
  tokens: string;
  codes: string;
}

export function tokenTables({ tokensTable, codesTable }: TokenTableNames): TokenTables {
  return {
    tokens: tableName(tokensTable, 'tokensTable'),
    codes: tableName(codesTable, 'codesTable'),
  };
}

/**
 * Times in ms since the epoch (null: none); scopes and devices as JSON arrays (devices null: any
 * device), rate limits as a JSON object (null: the gateway's defaults). The hashes are unique: a
 * second token with the same secret is refused.
 */
export function ensureTokenSchema(db: Database.Database, t: TokenTables): void {
  db.exec(`
    CREATE TABLE IF NOT EXISTS ${t.tokens} (
      id TEXT PRIMARY KEY NOT NULL,
      name TEXT NOT NULL,
      scopes TEXT NOT NULL,
      devices TEXT,
      created_at_ms INTEGER NOT NULL,
      expires_at_ms INTEGER,
      last_used_at_ms INTEGER,
      revoked_at_ms INTEGER,
      secret_hash TEXT NOT NULL UNIQUE,
      rate_limits TEXT
    );
    CREATE TABLE IF NOT EXISTS ${t.codes} (
      id TEXT PRIMARY KEY NOT NULL,
      name TEXT NOT NULL,
      scopes TEXT NOT NULL,
      device_pattern TEXT NOT NULL,
      uses INTEGER NOT NULL,
      uses_taken INTEGER NOT NULL DEFAULT 0 CHECK (uses_taken <= uses),
      created_at_ms INTEGER NOT NULL,
      expires_at_ms INTEGER,
      revoked_at_ms INTEGER,
      code_hash TEXT NOT NULL UNIQUE
    );`);
  addMissingColumn(db, t.tokens, 'rate_limits', 'rate_limits TEXT');
}

/**
 * Adds a column to a table an earlier version created without it (CREATE TABLE IF NOT EXISTS
 * leaves such a table as it is). A nullable column with no default: SQLite adds it without
 * rewriting the rows, and the rows it had read it as NULL. The writer runs the schema step
 * inside its transaction, so two processes starting at once cannot both add it.
 */
function addMissingColumn(
  db: Database.Database,
  table: string,
  column: string,
  definition: string,
) {
  const columns = db.prepare(`PRAGMA table_info(${table})`).all() as Array<{ name: string }>;
  if (!columns.some((existing) => existing.name === column)) {
    db.exec(`ALTER TABLE ${table} ADD COLUMN ${definition}`);
  }
}

// One row as a JSON object, so a reader connection answers a list in one row
// (json_group_array) and the writer thread reads a row the same way.
const tokenJson = `json_object('id', id, 'name', name, 'scopes', json(scopes),
  'devices', json(devices), 'created_at_ms', created_at_ms, 'expires_at_ms', expires_at_ms,
  'last_used_at_ms', last_used_at_ms, 'revoked_at_ms', revoked_at_ms, 'secret_hash', secret_hash,
  'rate_limits', json(rate_limits))`;
const codeJson = `json_object('id', id, 'name', name, 'scopes', json(scopes),
  'device_pattern', device_pattern, 'uses', uses, 'uses_taken', uses_taken,
  'created_at_ms', created_at_ms, 'expires_at_ms', expires_at_ms, 'revoked_at_ms', revoked_at_ms,
  'code_hash', code_hash)`;

interface TokenRow {
  id: string;
  name: string;
  scopes: string[];
  devices: string[] | null;
  created_at_ms: number;
  expires_at_ms: number | null;
  last_used_at_ms: number | null;
  revoked_at_ms: number | null;
  secret_hash: string;
  rate_limits: TokenRateLimits | null;
}

interface CodeRow {
  id: string;
  name: string;
  scopes: string[];
  device_pattern: string;
  uses: number;
  uses_taken: number;
  created_at_ms: number;
  expires_at_ms: number | null;
  revoked_at_ms: number | null;
  code_hash: string;
}

const date = (ms: number | null) => (ms === null ? null : new Date(ms));
const ms = (at: Date | null) => (at === null ? null : at.getTime());

function tokenOf(row: TokenRow): StoredToken {
  return {
    id: row.id,
    name: row.name,
    scopes: row.scopes,
    devices: row.devices,
    createdAt: new Date(row.created_at_ms),
    expiresAt: date(row.expires_at_ms),
    lastUsedAt: date(row.last_used_at_ms),
    revokedAt: date(row.revoked_at_ms),
    secretHash: row.secret_hash,
    rateLimits: row.rate_limits,
  };
}

function codeOf(row: CodeRow): EnrolmentCode {
  return {
    id: row.id,
    name: row.name,
    scopes: row.scopes,
    devicePattern: row.device_pattern,
    uses: row.uses,
    usesTaken: row.uses_taken,
    createdAt: new Date(row.created_at_ms),
    expiresAt: date(row.expires_at_ms),
    revokedAt: date(row.revoked_at_ms),
    codeHash: row.code_hash,
  };
}

/** A list as SQL text and parameters for a reader connection: one row, `rows` a JSON array. */
export function listQuery(
  t: TokenTables,
  kind: 'tokens' | 'codes',
  includeRevoked: boolean,
): { text: string; params: number[] } {
  const json = kind === 'tokens' ? tokenJson : codeJson;
  return {
    text: `SELECT json_group_array(${json} ORDER BY created_at_ms, id) AS rows
           FROM ${t[kind]} WHERE ? OR revoked_at_ms IS NULL`,
    params: [includeRevoked ? 1 : 0],
  };
}

/** The one code with that hash (`rows`: a JSON array of none or one). */
export function codeByHashQuery(t: TokenTables, codeHash: string) {
  return {
    text: `SELECT json_group_array(${codeJson}) AS rows FROM ${t.codes} WHERE code_hash = ?`,
    params: [codeHash],
  };
}

export function tokensOf(rows: string): StoredToken[] {
  return (JSON.parse(rows) as TokenRow[]).map(tokenOf);
}

export function codesOf(rows: string): EnrolmentCode[] {
  return (JSON.parse(rows) as CodeRow[]).map(codeOf);
}

// What follows runs in the writer thread, inside its transaction: the write lock is held from
// the first read on, so a check and the write it allows cannot be overtaken by another
// connection or process, and each write lands whole or not at all (its own savepoint).

function tokenById(sql: Statements, t: TokenTables, id: string): StoredToken | null {
  const row = sql(`SELECT ${tokenJson} AS row FROM ${t.tokens} WHERE id = ?`).get(id) as
    { row: string } | undefined;
  return row ? tokenOf(JSON.parse(row.row) as TokenRow) : null;
}

function codeById(sql: Statements, t: TokenTables, id: string): EnrolmentCode | null {
  const row = sql(`SELECT ${codeJson} AS row FROM ${t.codes} WHERE id = ?`).get(id) as
    { row: string } | undefined;
  return row ? codeOf(JSON.parse(row.row) as CodeRow) : null;
}

/** Which of the token's unique values is stored already, or null when none is. */
function tokenTaken(sql: Statements, t: TokenTables, token: StoredToken) {
  if (sql(`SELECT 1 FROM ${t.tokens} WHERE id = ?`).get(token.id)) return 'id' as const;
  if (sql(`SELECT 1 FROM ${t.tokens} WHERE secret_hash = ?`).get(token.secretHash)) {
    return 'secretHash' as const;
  }
  return null;
}

/** Stores the token, or returns which of its unique values is taken (nothing stored). */
export function insertToken(sql: Statements, t: TokenTables, token: StoredToken) {
  const taken = tokenTaken(sql, t, token);
  if (taken) return taken;
  sql(
    `INSERT INTO ${t.tokens} (id, name, scopes, devices, created_at_ms, expires_at_ms,
       last_used_at_ms, revoked_at_ms, secret_hash, rate_limits)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  ).run(
    token.id,
    token.name,
    JSON.stringify(token.scopes),
    token.devices === null ? null : JSON.stringify(token.devices),
    token.createdAt.getTime(),
    ms(token.expiresAt),
    ms(token.lastUsedAt),
    ms(token.revokedAt),
    token.secretHash,
    token.rateLimits === null ? null : JSON.stringify(token.rateLimits),
  );
  return null;
}

/** Revokes (a revoked one keeps its first time) and returns the token; null when unknown. */
export function revokeToken(sql: Statements, t: TokenTables, id: string, atMs: number) {
  sql(`UPDATE ${t.tokens} SET revoked_at_ms = ? WHERE id = ? AND revoked_at_ms IS NULL`).run(
    atMs,
    id,
  );
  return tokenById(sql, t, id);
}

/** Moves each known token's last use forward to its time; never back. */
export function recordLastUse(
  sql: Statements,
  t: TokenTables,
  uses: Array<{ id: string; atMs: number }>,
): void {
  const update = sql(
    `UPDATE ${t.tokens} SET last_used_at_ms = ?1
     WHERE id = ?2 AND (last_used_at_ms IS NULL OR last_used_at_ms < ?1)`,
  );
  for (const { id, atMs } of uses) update.run(atMs, id);
}

/** Stores the code (nothing taken), or returns which of its unique values is taken. */
export function insertCode(sql: Statements, t: TokenTables, code: NewEnrolmentCode) {
  if (sql(`SELECT 1 FROM ${t.codes} WHERE id = ?`).get(code.id)) return 'id' as const;
  if (sql(`SELECT 1 FROM ${t.codes} WHERE code_hash = ?`).get(code.codeHash)) {
    return 'codeHash' as const;
  }
  sql(
    `INSERT INTO ${t.codes} (id, name, scopes, device_pattern, uses, uses_taken, created_at_ms,
       expires_at_ms, revoked_at_ms, code_hash) VALUES (?, ?, ?, ?, ?, 0, ?, ?, NULL, ?)`,
  ).run(
    code.id,
    code.name,
    JSON.stringify(code.scopes),
    code.devicePattern,
    code.uses,
    code.createdAt.getTime(),
    ms(code.expiresAt),
    code.codeHash,
  );
  return null;
}

export function revokeCode(sql: Statements, t: TokenTables, id: string, atMs: number) {
  sql(`UPDATE ${t.codes} SET revoked_at_ms = ? WHERE id = ? AND revoked_at_ms IS NULL`).run(
    atMs,
    id,
  );
  return codeById(sql, t, id);
}

export type EnrolWrite =
  | { outcome: 'enrolled' }
  | { outcome: 'refused'; reason: EnrolRefusal }
  | { outcome: 'conflict'; field: 'id' | 'secretHash' };

/**
 * Takes one use of the code and stores the token, or neither: the code is checked again here
 * (the caller read it before making the token; it may have been revoked or used up since), and
 * the writer thread runs one write at a time, so no two enrols can take the same last use.
 */
export function enrolToken(
  sql: Statements,
  t: TokenTables,
  { codeId, atMs, token }: { codeId: string; atMs: number; token: StoredToken },
): EnrolWrite {
  const code = codeById(sql, t, codeId);
  if (!code) return { outcome: 'refused', reason: 'unknown' };
  const refusal = enrolRefusal(code, new Date(atMs));
  if (refusal) return { outcome: 'refused', reason: refusal };
  const taken = tokenTaken(sql, t, token);
  if (taken) return { outcome: 'conflict', field: taken };
  const took = sql(
    `UPDATE ${t.codes} SET uses_taken = uses_taken + 1 WHERE id = ? AND uses_taken < uses`,
  ).run(codeId);
  if (took.changes !== 1) return { outcome: 'refused', reason: 'used_up' };
  insertToken(sql, t, token);
  return { outcome: 'enrolled' };
}
