/**
 * Tokens and enrolment codes as data (docs/adr/0019). Secrets never reach the store: a token is
 * kept with the hex SHA-256 of its secret, an enrolment code with that of its code, and only
 * those hashes are ever looked up.
 */

import { ConflictError } from '@screenfleet/contracts';

/** The route classes a gateway counts requests in (docs/adr/0019, "Rate limits are per gateway"). */
export type RateLimitedRoute = 'ingest' | 'search' | 'operator' | 'archive' | 'admin';

/**
 * A token's own limits, per route class: at most `limit` requests per `windowMs`. A class left
 * out gets the gateway's default; the store keeps them as given (the API checks them).
 */
export type TokenRateLimits = Partial<
  Record<RateLimitedRoute, { limit: number; windowMs: number }>
>;

/** A stored API token. Dates are UTC, millisecond precision. */
export interface StoredToken {
  /** `tok_` + 16 hex: public (lists, audit rows, revocation). */
  id: string;
  name: string;
  scopes: string[];
  /** The device names the token may act for; null: any device. */
  devices: string[] | null;
  createdAt: Date;
  /** After it (or at it) the token is no longer good; null: never expires. */
  expiresAt: Date | null;
  /** The latest use a gateway reported; null: never used. */
  lastUsedAt: Date | null;
  /** When it was revoked (the first revocation); null: not revoked. */
  revokedAt: Date | null;
  /** Hex SHA-256 of the secret (the secret itself is never stored). */
  secretHash: string;
  /** Its own rate limits; null: the gateway's defaults for every route class. */
  rateLimits: TokenRateLimits | null;
}

/** An enrolment code as stored: `uses` tokens may be made from it, each bound to a device. */
export interface EnrolmentCode {
  id: string;
  name: string;
  /** The scopes of the tokens it makes. */
  scopes: string[];
  /** Which device names may enrol with it (the caller's rule decides what matches). */
  devicePattern: string;
  /** How many tokens it may make in all. */
  uses: number;
  /** How many of them it has made. */
  usesTaken: number;
  createdAt: Date;
  /** At or after it the code no longer enrols; null: never expires. */
  expiresAt: Date | null;
  revokedAt: Date | null;
  /** Hex SHA-256 of the code. */
  codeHash: string;
}

/** A code as created: nothing taken, not revoked. */
export type NewEnrolmentCode = Omit<EnrolmentCode, 'usesTaken' | 'revokedAt'>;

/**
 * Why a code made no token, checked in this order: no code has that hash, it was revoked, it
 * has expired, every use is taken.
 */
export type EnrolRefusal = 'unknown' | 'revoked' | 'expired' | 'used_up';

export type EnrolResult =
  /** One use taken and `token` stored; `code` as it was given to makeToken. */
  { ok: true; token: StoredToken; code: EnrolmentCode } | { ok: false; reason: EnrolRefusal };

/** The latest use of a token, as a gateway reports it. */
export interface TokenUse {
  id: string;
  at: Date;
}

/**
 * Where tokens and enrolment codes live (the ingest workers' store). Errors meaning the store
 * cannot be reached reject with StoreUnavailableError (retry with backoff); an id or hash that
 * is stored already rejects with ConflictError (libs/contracts) and stores nothing.
 */
export interface TokenStore {
  /** Creates the tables or indexes (unique hashes included); idempotent. Writes call it too. */
  ensureSchema(): Promise<void>;
  /** Stores a new token; ConflictError when its id or secretHash is stored already. */
  insertToken(token: StoredToken): Promise<void>;
  /** Every token, oldest first (by createdAt, then id); revoked ones only when asked. */
  listTokens(options?: { includeRevoked?: boolean }): Promise<StoredToken[]>;
  /**
   * Revokes a token at `at` and returns it as stored now; null when no token has that id. A
   * token revoked already keeps its first revokedAt.
   */
  revokeToken(id: string, at: Date): Promise<StoredToken | null>;
  /**
   * Sets each token's lastUsedAt to the given time when that is later than the stored one (it
   * never moves back). Unknown ids are ignored.
   */
  recordLastUse(uses: TokenUse[]): Promise<void>;
  /** Stores a new code; ConflictError when its id or codeHash is stored already. */
  insertEnrolmentCode(code: NewEnrolmentCode): Promise<void>;
  /** Every code, oldest first (by createdAt, then id); revoked ones only when asked. */
  listEnrolmentCodes(options?: { includeRevoked?: boolean }): Promise<EnrolmentCode[]>;
  /** As revokeToken, for a code: it makes no token afterwards. */
  revokeEnrolmentCode(id: string, at: Date): Promise<EnrolmentCode | null>;
  /**
   * Takes one use of the code whose hash is `codeHash`, if it is live at `at` (stored, not
   * revoked, not expired, a use left), and stores the token `makeToken(code)` returns, as one
   * step: the use is taken only if the token is stored. Exact under concurrency: N enrols at
   * once on a code with k uses left make min(N, k) tokens, the others are refused 'used_up'.
   * A token whose id or hash is stored already rejects ConflictError and takes no use.
   */
  enrol(
    codeHash: string,
    at: Date,
    makeToken: (code: EnrolmentCode) => StoredToken,
  ): Promise<EnrolResult>;
  close(): Promise<void>;
}

/** Why a code cannot enrol at `at`, or null when it can (has a use left, as far as it says). */
export function enrolRefusal(
  code: Pick<EnrolmentCode, 'revokedAt' | 'expiresAt' | 'uses' | 'usesTaken'>,
  at: Date,
): EnrolRefusal | null {
  if (code.revokedAt) return 'revoked';
  if (code.expiresAt && code.expiresAt.getTime() <= at.getTime()) return 'expired';
  if (code.usesTaken >= code.uses) return 'used_up';
  return null;
}

/** An insert refused because `field`'s value is stored already: the same message on every store. */
export function tokenConflict(
  what: 'token' | 'enrolment code',
  id: string,
  field: 'id' | 'secretHash' | 'codeHash',
): ConflictError {
  return new ConflictError(
    field === 'id'
      ? `${what} ${id} not stored: one with this id is stored already`
      : `${what} ${id} not stored: another one has the same ${field}`,
  );
}
