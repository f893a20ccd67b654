/**
 * tokens.request / tokens.reply on `tokens.rpc.v1` (served by the ingest workers, which own the
 * token store) and tokens.changed on the `tokens.events` stream (ADR 0019). Secrets never
 * travel: the gateway makes a secret or an enrolment code, sends its SHA-256 and answers the
 * secret to its caller once. Token changes name their `actor`, for the audit row the worker
 * writes with them.
 */
import type { FromSchema } from 'json-schema-to-ts';
import { deviceNameSchema } from '../common.schema';
import type { Contract } from '../contract';
import {
  devicePatternSchema,
  enrolmentCodeIdSchema,
  enrolmentCodeViewSchema,
  tokenIdSchema,
  tokenRateLimitsSchema,
  tokenViewSchema,
} from '../http/tokens.routes';
import { scopesSchema } from '../scopes';
import { compileValidator } from '../validate';
import { refusedReply } from './refused-reply';

/** Hex SHA-256 of a secret or a code. */
export const secretHashSchema = { type: 'string', pattern: '^[0-9a-f]{64}$' } as const;
const actorSchema = { type: 'string', minLength: 1, maxLength: 256 } as const;
const label = { type: 'string', minLength: 1, maxLength: 200 } as const;
const msOrNull = { type: ['integer', 'null'] } as const;
const op = <const Name extends string, const P extends Record<string, object>>(
  name: Name,
  properties: P,
) =>
  ({
    type: 'object',
    required: ['op', ...(Object.keys(properties) as Array<keyof P & string>)],
    additionalProperties: false,
    properties: { op: { const: name }, ...properties },
  }) as const;

/**
 * What the gateway (or the tokens CLI) asks. `snapshot`: every live token as gateways hold them.
 * `used`: the latest uses a gateway saw (at most one report per token a minute).
 */
export const tokensRequestSchema = {
  type: 'object',
  discriminator: { propertyName: 'op' },
  required: ['op'],
  oneOf: [
    op('snapshot', {}),
    op('list', { include_revoked: { type: 'boolean' } }),
    op('create', {
      actor: actorSchema,
      id: tokenIdSchema,
      name: label,
      scopes: scopesSchema,
      devices: { type: ['array', 'null'], items: deviceNameSchema },
      expires_at_ms: msOrNull,
      rate_limits: tokenRateLimitsSchema,
      secret_hash: secretHashSchema,
    }),
    op('revoke', { actor: actorSchema, id: tokenIdSchema }),
    op('list_codes', { include_revoked: { type: 'boolean' } }),
    op('create_code', {
      actor: actorSchema,
      id: enrolmentCodeIdSchema,
      name: label,
      scopes: scopesSchema,
      device_pattern: devicePatternSchema,
      uses: { type: 'integer', minimum: 1 },
      expires_at_ms: msOrNull,
      code_hash: secretHashSchema,
    }),
    op('revoke_code', { actor: actorSchema, id: enrolmentCodeIdSchema }),
    op('enrol', {
      code_hash: secretHashSchema,
      device_name: deviceNameSchema,
      token_id: tokenIdSchema,
      secret_hash: secretHashSchema,
    }),
    op('used', {
      uses: {
        type: 'array',
        maxItems: 10_000,
        items: {
          type: 'object',
          required: ['id', 'at_ms'],
          additionalProperties: false,
          properties: { id: tokenIdSchema, at_ms: { type: 'integer' } },
        },
      },
    }),
  ],
} as const;

/** A live token as every gateway holds it in memory: what a request is checked against. */
export const heldTokenSchema = {
  type: 'object',
  required: ['id', 'scopes', 'devices', 'expires_at_ms', 'rate_limits', 'secret_hash'],
  additionalProperties: false,
  properties: {
    id: tokenIdSchema,
    scopes: scopesSchema,
    devices: { type: ['array', 'null'], items: deviceNameSchema },
    expires_at_ms: msOrNull,
    rate_limits: tokenRateLimitsSchema,
    secret_hash: secretHashSchema,
  },
} as const;

const reply = <const Name extends string, const P extends Record<string, object>>(
  outcome: Name,
  properties: P,
) =>
  ({
    type: 'object',
    required: ['outcome', ...(Object.keys(properties) as Array<keyof P & string>)],
    additionalProperties: false,
    properties: { outcome: { const: outcome }, ...properties },
  }) as const;

/**
 * The answer. Refusals: `not_found` (no such id), `conflict` (an id or hash stored already),
 * the enrolment's reasons (`enrolment_code_invalid` for an unknown code, `_revoked`, `_expired`,
 * `_used_up`, `device_not_allowed`), and the usual ones.
 */
export const tokensReplySchema = {
  type: 'object',
  discriminator: { propertyName: 'outcome' },
  required: ['outcome'],
  oneOf: [
    reply('snapshot', { tokens: { type: 'array', items: heldTokenSchema } }),
    reply('tokens', { tokens: { type: 'array', items: tokenViewSchema } }),
    reply('token', { token: tokenViewSchema }),
    reply('codes', { codes: { type: 'array', items: enrolmentCodeViewSchema } }),
    reply('code', { code: enrolmentCodeViewSchema }),
    reply('recorded', {}),
    refusedReply([
      'validation_failed',
      'store_unavailable',
      'not_found',
      'conflict',
      'enrolment_code_invalid',
      'enrolment_code_revoked',
      'enrolment_code_expired',
      'enrolment_code_used_up',
      'device_not_allowed',
      'failed',
    ]),
  ],
} as const;

/**
 * Published on `tokens.events` after every change of the stored tokens (by a worker, or by the
 * CLI writing the store itself): every gateway then loads a new snapshot.
 */
export const tokensChangedSchema = {
  type: 'object',
  required: ['reason'],
  additionalProperties: false,
  properties: {
    /** For logs: 'token.create', 'token.revoke', 'token.enrol', 'import'... */
    reason: { type: 'string', maxLength: 64 },
  },
} as const;

export type TokensRequest = FromSchema<typeof tokensRequestSchema>;
export type TokensReply = FromSchema<typeof tokensReplySchema>;
export type HeldToken = FromSchema<typeof heldTokenSchema>;
export type TokensChanged = FromSchema<typeof tokensChangedSchema>;
export type TokensRefusalCode = Extract<TokensReply, { outcome: 'refused' }>['code'];

export const tokensMessagesContract = {
  validators: {
    tokensRequest: compileValidator<TokensRequest>(tokensRequestSchema, 'tokens request'),
    tokensReply: compileValidator<TokensReply>(tokensReplySchema, 'tokens reply'),
    tokensChanged: compileValidator<TokensChanged>(tokensChangedSchema, 'tokens changed'),
  },
  components: {},
  operations: [],
} satisfies Contract;
