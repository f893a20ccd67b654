import type { FromSchema } from 'json-schema-to-ts';
import { deviceNameSchema } from '../common.schema';
import type { ApiOperation, Contract } from '../contract';
import { compileValidator } from '../validate';

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

export type WhoAmI = FromSchema<typeof whoAmISchema>;

export const whoAmIRoute: ApiOperation = {
  method: 'get',
  path: '/auth/whoami',
  operationId: 'whoAmI',
  tag: 'auth',
  summary: 'What the caller may do: its token id, scopes and devices',
  description:
    'For clients that offer only what their token allows (the console at `/console`). With ' +
    'no Authorization header it answers the tokenless loopback grant where that applies ' +
    '(GATEWAY_ALLOW_UNAUTHENTICATED_LOOPBACK, a loopback peer, Host and Origin), else 401. ' +
    'The token itself is never echoed.',
  scope: 'any',
  response: {
    schema: whoAmISchema,
    description: 'The grant the request was authenticated with.',
    example: {
      token_id: 'sre-console',
      grant: 'token',
      scopes: ['search', 'archive:read', 'operator'],
      devices: null,
    },
  },
  errors: [401, 403, 405, 429, 500],
};

export const whoAmIContract = {
  validators: { whoAmI: compileValidator<WhoAmI>(whoAmISchema, 'whoami answer') },
  components: { WhoAmI: whoAmISchema },
  operations: [whoAmIRoute],
} satisfies Contract;
