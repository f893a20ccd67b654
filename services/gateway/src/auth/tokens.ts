import { randomBytes } from 'node:crypto';
import {
  limits,
  scopes,
  secretHash,
  type Scope,
  type TokenRateClass,
} from '@screenfleet/contracts';
import type { RateRule } from './rate-limiter';

export { scopes, type Scope } from '@screenfleet/contracts';

export interface TokenGrant {
  /** Shown in logs and audit lines; never the secret. */
  id: string;
  scopes: readonly Scope[];
  /** Producer tokens may be bound to device names; absent = any device. */
  devices?: readonly string[];
  /** A stored token's own rate limits, by class, in place of the gateway's for that class. */
  rateLimits?: Readonly<Partial<Record<TokenRateClass, RateRule>>>;
  /** A stored token's expiry (ms since the epoch): valid before it, refused from it on. */
  expiresAtMs?: number;
}

export interface TokenEntry extends TokenGrant {
  token: string;
}

/**
 * The one seam authenticate.ts asks: the grant of a presented secret, looked up by its SHA-256
 * (one hash and one map read, found or not: the time does not depend on how much of a secret
 * matches). GATEWAY_TOKENS or the local token alone (createTokenRegistry), or those merged with
 * the stored tokens (token-cache.ts).
 */
export interface TokenRegistry {
  /** The grant, unexpired; undefined for a secret it does not hold. */
  find(presented: string): TokenGrant | undefined;
  /**
   * False while an unknown secret may still be a good one (no snapshot of the stored tokens was
   * loaded yet): authenticate.ts then answers 503, not 401.
   */
  isComplete(): boolean;
  readonly size: number;
}

/** The configured tokens (GATEWAY_TOKENS, or the local token), by the hash of their secret. */
export function staticGrants(entries: readonly TokenEntry[]): Map<string, TokenGrant> {
  return new Map(entries.map((entry) => [secretHash(entry.token), grantOf(entry)]));
}

export function createTokenRegistry(entries: readonly TokenEntry[]): TokenRegistry {
  const grants = staticGrants(entries);
  return {
    size: grants.size,
    find: (presented) => grants.get(secretHash(presented)),
    isComplete: () => true,
  };
}

function grantOf({ id, scopes: granted, devices }: TokenEntry): TokenGrant {
  return devices ? { id, scopes: granted, devices } : { id, scopes: granted };
}

export function generateToken(): string {
  return `sf_${randomBytes(24).toString('base64url')}`;
}

/** Parses GATEWAY_TOKENS; throws with the reason so start-up fails with one clear line. */
export function parseTokens(json: string): TokenEntry[] {
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch {
    throw new Error('GATEWAY_TOKENS must be a JSON list of {id, token, scopes, devices?}');
  }
  if (!Array.isArray(value)) throw new Error('GATEWAY_TOKENS must be a JSON list');
  return value.map((raw: unknown, i) => {
    const entry = raw as Partial<Record<keyof TokenEntry, unknown>>;
    const where = `GATEWAY_TOKENS[${i}]`;
    // Operator commands carry the id as requested_by, which agents check against this limit.
    if (typeof entry.id !== 'string' || !entry.id || entry.id.length > limits.maxTokenIdLength)
      throw new Error(`${where}.id must be a string of 1 to ${limits.maxTokenIdLength} characters`);
    if (typeof entry.token !== 'string' || entry.token.length < 16)
      throw new Error(`${where}.token must be a string of at least 16 characters`);
    if (!Array.isArray(entry.scopes) || !entry.scopes.every((s) => scopes.includes(s as Scope)))
      throw new Error(`${where}.scopes must be a list of: ${scopes.join(', ')}`);
    if (
      entry.devices !== undefined &&
      !(Array.isArray(entry.devices) && entry.devices.every((d) => typeof d === 'string'))
    )
      throw new Error(`${where}.devices must be a list of device names`);
    return {
      id: entry.id,
      token: entry.token,
      scopes: entry.scopes as Scope[],
      ...(entry.devices ? { devices: entry.devices } : {}),
    };
  });
}
