/**
 * What a token may do. One list for the gateway that checks them, the workers that store
 * tokens and the API's description (ADR 0019).
 */
export const scopes = [
  'ingest',
  'search',
  'operator',
  'archive:read',
  'archive:write',
  'data:delete',
  'metrics',
  /** Create, list and revoke tokens and enrolment codes. */
  'tokens:admin',
  /** Read the audit trail (GET /audit). */
  'audit:read',
] as const;
export type Scope = (typeof scopes)[number];

/** A token's scopes as the contracts write them: a non-empty set of known scopes. */
export const scopesSchema = {
  type: 'array',
  minItems: 1,
  maxItems: scopes.length,
  uniqueItems: true,
  items: { enum: scopes },
} as const;

/** The classes a gateway counts requests in (ADR 0019); a token may carry its own rule for each. */
export const tokenRateClasses = ['ingest', 'search', 'operator', 'archive', 'admin'] as const;
export type TokenRateClass = (typeof tokenRateClasses)[number];
