import type {
  EnrolmentCodeCreateRequest,
  EnrolmentCodeView,
  Scope,
  TokenCreateRequest,
  TokenView,
} from '@screenfleet/contracts';
import { fromLocalInput } from './search-params.js';

/**
 * The scopes a token or an enrolment code may carry, in the contracts' order. Their one home is
 * libs/contracts/src/scopes.ts; the console cannot import it at run time (ADR 0010), so they
 * are restated and token-forms.test.ts holds them equal to it.
 */
export const tokenScopes = [
  'ingest',
  'search',
  'operator',
  'archive:read',
  'archive:write',
  'data:delete',
  'metrics',
  'tokens:admin',
  'audit:read',
] as const satisfies readonly Scope[];

/** What each scope lets a token do, beside its checkbox. */
export const scopeHints: Record<Scope, string> = {
  ingest: 'send captures',
  search: 'search and list devices',
  operator: 'press keys, click and type on devices',
  'archive:read': "read the archive's status",
  'archive:write': 'configure, run and restore the archive',
  'data:delete': 'delete stored items',
  metrics: 'read /metrics',
  'tokens:admin': 'create, list and revoke tokens and enrolment codes',
  'audit:read': 'read the audit trail',
};

/** The token form as typed: every field a string, the scopes as ticked. */
export interface TokenDraft {
  name: string;
  scopes: readonly Scope[];
  /** Device names, comma-separated; empty: any device. */
  devices: string;
  /** A datetime-local value (local time); empty: never expires. */
  expires: string;
}

export interface CodeDraft {
  name: string;
  scopes: readonly Scope[];
  devicePattern: string;
  uses: string;
  expires: string;
}

/**
 * "desk-1, desk-2" as ["desk-1", "desk-2"]: split at commas (or line breaks), each name trimmed
 * (names may hold spaces inside, never at their ends as typed here), empties and repeats
 * dropped. Nothing left: null, which the API reads as any device.
 */
export function devicesFromText(text: string): string[] | null {
  const names = [
    ...new Set(
      text
        .split(/[,\n]/)
        .map((name) => name.trim())
        .filter(Boolean),
    ),
  ];
  return names.length > 0 ? names : null;
}

/** A datetime-local value as an API time (RFC 3339, UTC `Z`); empty or not a time: null. */
export function expiryFromInput(value: string): string | null {
  return fromLocalInput(value.trim()) || null;
}

/** Ticked scopes in the contracts' order, whatever order they were ticked in. */
const inOrder = (scopes: readonly Scope[]): Scope[] =>
  tokenScopes.filter((s) => scopes.includes(s));

/**
 * POST /tokens' body. Optional fields are left out when empty rather than sent as null, so the
 * request reads as the API's examples do. What the API checks (a name, at least one scope, an
 * expiry in the future) is left to it: its 400 names the field.
 */
export function tokenRequest(draft: TokenDraft): TokenCreateRequest {
  const devices = devicesFromText(draft.devices);
  const expires = expiryFromInput(draft.expires);
  return {
    name: draft.name.trim(),
    scopes: inOrder(draft.scopes),
    ...(devices ? { devices } : {}),
    ...(expires ? { expires_at: expires } : {}),
  };
}

/** POST /enrolment-codes' body; `uses` as the number typed (the form allows whole numbers). */
export function codeRequest(draft: CodeDraft): EnrolmentCodeCreateRequest {
  const expires = expiryFromInput(draft.expires);
  return {
    name: draft.name.trim(),
    scopes: inOrder(draft.scopes),
    device_pattern: draft.devicePattern.trim(),
    uses: Number(draft.uses.trim()),
    ...(expires ? { expires_at: expires } : {}),
  };
}

/** Whether a token or code still works: revoked first, then expired (at `now`), else active. */
export function credentialState(
  item: Pick<TokenView | EnrolmentCodeView, 'revoked_at' | 'expires_at'>,
  now: Date,
): 'active' | 'expired' | 'revoked' {
  if (item.revoked_at !== null) return 'revoked';
  if (item.expires_at !== null && new Date(item.expires_at).getTime() <= now.getTime()) {
    return 'expired';
  }
  return 'active';
}

/** GET /tokens' and GET /enrolment-codes' query. */
export const listQuery = (includeRevoked: boolean): URLSearchParams =>
  new URLSearchParams(includeRevoked ? { include_revoked: 'true' } : {});
