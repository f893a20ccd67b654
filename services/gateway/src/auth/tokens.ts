import { randomBytes, timingSafeEqual, createHash } from 'node:crypto';
import { limits, scopes, type Scope } from '@screenfleet/contracts';

export { scopes, type Scope } from '@screenfleet/contracts';

export interface TokenGrant {
  /** Shown in logs and audit lines; never the secret. */
  id: string;
  scopes: readonly Scope[];
  /** Producer tokens may be bound to device names; absent = any device. */
  devices?: readonly string[];
}

export interface TokenEntry extends TokenGrant {
  token: string;
}

/** Looks tokens up by a hash, so the comparison time does not depend on the secret. */
export interface TokenRegistry {
  find(presented: string): TokenGrant | undefined;
  readonly size: number;
}

const digest = (value: string) => createHash('sha256').update(value).digest();

export function createTokenRegistry(entries: readonly TokenEntry[]): TokenRegistry {
  const hashed = entries.map((entry) => ({ hash: digest(entry.token), grant: grantOf(entry) }));
  return {
    size: hashed.length,
    find(presented) {
      const hash = digest(presented);
      return hashed.find((candidate) => timingSafeEqual(candidate.hash, hash))?.grant;
    },
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
