/**
 * Audit rows (docs/adr/0019, issue #40): every operator command, token and enrolment change,
 * delete and restore, as a row in the store the ingest workers own. The gateway publishes each
 * fact as a message; a worker writes it here, so a redelivered message must be stored once: a
 * row's id is chosen by whoever made the fact, and an insert of a stored id changes nothing.
 */

import { ValidationError } from '@screenfleet/contracts';
import { ContentRejectedError } from './store-error-kinds';

/** A value of a row's details: plain JSON (no Dates, no undefined). */
export type AuditValue =
  string | number | boolean | null | AuditValue[] | { [key: string]: AuditValue };

/** How the audited action ended: done, refused before it ran (scope, device), or failed. */
export type AuditOutcome = 'ok' | 'refused' | 'failed';

/** One audited fact. Dates are UTC, millisecond precision. */
export interface AuditRow {
  /** Unique, chosen by the writer (a message's id, say): an insert of a stored id is a no-op. */
  id: string;
  at: Date;
  /** A token id (`tok_...`), or a fixed name for the grants that are no token (local, env...). */
  actor: string;
  /** What was done: 'operator.press', 'token.create', 'data.delete', 'archive.restore'... */
  action: string;
  /** The device acted on; null when the action concerns none (a token change). */
  device: string | null;
  outcome: AuditOutcome;
  /** Why it was refused or failed (an error code such as 'device_unavailable'); null: none. */
  outcomeCode: string | null;
  /** How long the action took; null when not measured. */
  durationMs: number | null;
  /**
   * A small JSON object: element index, key, modifiers, counts... Kept as given, field names
   * chosen by our code (MongoDB refuses names starting with `$`).
   */
  details: { [key: string]: AuditValue };
}

/** The most rows one query returns. */
export const MAX_AUDIT_PAGE = 1000;

export interface AuditQuery {
  device?: string;
  actor?: string;
  action?: string;
  /** Inclusive. */
  from?: Date;
  /** Exclusive. */
  to?: Date;
  /** Rows per page, 1 to MAX_AUDIT_PAGE. */
  limit: number;
  /** The previous page's nextCursor: this page starts strictly after its last row. */
  cursor?: string;
}

export interface AuditPage {
  /** Newest first: by `at` descending, ties by `id` descending (binary UTF-8 order). */
  rows: AuditRow[];
  /** Where the next page starts; null when no row follows this page's last. */
  nextCursor: string | null;
}

/**
 * Where audit rows live. Errors meaning the store cannot be reached reject with
 * StoreUnavailableError (retry with backoff).
 */
export interface AuditStore {
  /** Creates the table or the collection's indexes; idempotent, call it at start-up. */
  ensureSchema(): Promise<void>;
  /**
   * Stores the rows; one whose id is stored already (or comes earlier in the call) is counted
   * in `alreadyStored` and the stored one kept as it was: a redelivered batch is success. A
   * batch with a row no store can keep as given (checkAuditRows) rejects ContentRejectedError
   * and stores nothing: never worth a retry.
   */
  insertRows(rows: AuditRow[]): Promise<{ inserted: number; alreadyStored: number }>;
  /**
   * One page of the rows matching every filter given, newest first, by keyset on (at, id): a
   * page after a cursor starts strictly after that row, so rows stored meanwhile never shift
   * it (newer ones are not in later pages, older ones come in their place, each row once). A
   * cursor that is not one of nextCursor's rejects ValidationError; a limit out of range,
   * RangeError.
   */
  query(query: AuditQuery): Promise<AuditPage>;
  /**
   * Deletes at most `limit` rows whose `at` is before `cutoff` (a row at the cutoff stays),
   * oldest first, and returns how many it deleted: fewer than `limit` means none is left.
   * The archive pass's retention calls it in chunks.
   */
  deleteOlderThan(cutoff: Date, options: { limit: number }): Promise<number>;
  close(): Promise<void>;
}

/** Where a page ends: the last row's time (ms) and id. */
export interface AuditPosition {
  atMs: number;
  id: string;
}

/** The cursor after `row`: opaque to callers (base64url of its time and id). */
export function auditCursor(row: Pick<AuditRow, 'at' | 'id'>): string {
  return Buffer.from(JSON.stringify([row.at.getTime(), row.id])).toString('base64url');
}

/** The position a cursor names; ValidationError (path `cursor`) when it is not one of ours. */
export function auditCursorPosition(cursor: string): AuditPosition {
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    parsed = undefined;
  }
  if (
    !Array.isArray(parsed) ||
    parsed.length !== 2 ||
    !Number.isSafeInteger(parsed[0]) ||
    typeof parsed[1] !== 'string'
  ) {
    throw new ValidationError('invalid audit cursor', [
      { path: 'cursor', rule: 'format', detail: 'pass a nextCursor from an earlier page as is' },
    ]);
  }
  return { atMs: parsed[0] as number, id: parsed[1] };
}

/** Checks a page size or a delete chunk (a caller's bug, not a request's: RangeError). */
export function checkAuditLimit(limit: number, max = Infinity): number {
  if (!Number.isInteger(limit) || limit < 1 || limit > max) {
    throw new RangeError(`limit must be an integer from 1 to ${max}, got ${limit}`);
  }
  return limit;
}

/**
 * The page from the rows an adapter read: it asks for `limit + 1`, so a row past the page says
 * that another page follows without a second query or a last page that comes back empty.
 */
export function auditPage(rows: AuditRow[], limit: number): AuditPage {
  if (rows.length <= limit) return { rows, nextCursor: null };
  const page = rows.slice(0, limit);
  return { rows: page, nextCursor: auditCursor(page[limit - 1]!) };
}

/**
 * Refuses a batch holding a row that no store can order or give back as it came: an invalid
 * `at` (MongoDB would store it and sort it anywhere, SQLite refuse it as NULL) or a duration
 * that is not a finite number (JSON and SQLite have no NaN or Infinity). ContentRejectedError:
 * the same on every store, and never worth a retry.
 */
export function checkAuditRows(rows: readonly AuditRow[]): void {
  for (const row of rows) {
    const problem = Number.isNaN(row.at.getTime())
      ? 'its at is not a valid date'
      : row.durationMs !== null && !Number.isFinite(row.durationMs)
        ? `its durationMs ${row.durationMs} is not a finite number`
        : undefined;
    if (problem) {
      throw new ContentRejectedError(`audit rows not stored: row ${row.id}: ${problem}`);
    }
  }
}
