import { createHash, randomBytes } from 'node:crypto';

/**
 * The secrets of ADR 0019, made where they are shown (the gateway's answer, the tokens CLI) and
 * never stored: the store and the bus see only their SHA-256. 32 random bytes: a hash of them
 * cannot be reversed or guessed, so no slow key derivation is needed. The prefixes let secret
 * scanners find a leaked one.
 */

/** Hex SHA-256 of a secret or an enrolment code, as the token store keeps it. */
export function secretHash(secret: string): string {
  return createHash('sha256').update(secret).digest('hex');
}

/** A new token: its public id (`tok_` + 16 hex), its secret (`sf_` + 43) and that secret's hash. */
export function newTokenSecret(): { id: string; secret: string; secretHash: string } {
  const secret = `sf_${randomBytes(32).toString('base64url')}`;
  return { id: `tok_${randomBytes(8).toString('hex')}`, secret, secretHash: secretHash(secret) };
}

/** A new enrolment code: its id (`enr_` + 16 hex), the code (`sfe_` + 43) and the code's hash. */
export function newEnrolmentCode(): { id: string; code: string; codeHash: string } {
  const code = `sfe_${randomBytes(32).toString('base64url')}`;
  return { id: `enr_${randomBytes(8).toString('hex')}`, code, codeHash: secretHash(code) };
}
