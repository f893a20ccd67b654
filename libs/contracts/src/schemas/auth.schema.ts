import { deviceNameSchema } from './common';

/**
 * GET /auth/whoami: what the gateway takes the caller for, so that a client (the console) offers
 * only what its token may do. Never the token itself.
 */
export const whoAmISchema = {
  type: 'object',
  additionalProperties: false,
  required: ['token_id', 'grant', 'scopes', 'devices'],
  properties: {
    /** The token's id from GATEWAY_TOKENS (the one in logs and audit lines). */
    token_id: { type: 'string' },
    /** `token`: a bearer token; `loopback`: the tokenless loopback grant. */
    grant: { enum: ['token', 'loopback'] },
    /** The scopes the caller holds (ingest, search, operator, archive:read, ...). */
    scopes: { type: 'array', uniqueItems: true, items: { type: 'string' } },
    /** The devices a bound token may act for; null: any device. */
    devices: { type: ['array', 'null'], items: deviceNameSchema },
  },
} as const;
