/**
 * Tokens and enrolment codes as data (ADR 0019): POST/GET /tokens, DELETE /tokens/{id}, the
 * same for /enrolment-codes, and POST /enroll, where a desktop trades a code for its own token.
 */
import type { FromSchema } from 'json-schema-to-ts';
import { dateTimeSchema, deviceNameSchema, nullableDateTimeSchema } from '../common.schema';
import { authErrors, bodyErrors, type ApiOperation, type Contract } from '../contract';
import { scopesSchema, tokenRateClasses } from '../scopes';
import { compileValidator } from '../validate';

/** A stored token's public id: lists, audit rows and DELETE /tokens/{id} use it. */
export const tokenIdSchema = { type: 'string', pattern: '^tok_[0-9a-f]{16}$' } as const;
/** An enrolment code's public id. */
export const enrolmentCodeIdSchema = { type: 'string', pattern: '^enr_[0-9a-f]{16}$' } as const;

/** What a person calls a token or a code ("desk-17", "lab enrolment 2026-11"). */
const labelSchema = { type: 'string', minLength: 1, maxLength: 200 } as const;

/** One class's rule: at most `limit` requests per `window_seconds`, as GATEWAY_RATE_LIMIT_* says. */
const rateRuleSchema = {
  type: 'object',
  required: ['limit', 'window_seconds'],
  additionalProperties: false,
  properties: {
    limit: { type: 'integer', minimum: 1, maximum: 1_000_000 },
    window_seconds: { type: 'integer', minimum: 1, maximum: 86_400 },
  },
} as const;

/**
 * A token's own limits, by route class, in place of the gateway's GATEWAY_RATE_LIMIT_* for that
 * class (a class left out keeps the gateway's); null: the gateway's for every class.
 */
export const tokenRateLimitsSchema = {
  type: ['object', 'null'],
  additionalProperties: false,
  properties: Object.fromEntries(tokenRateClasses.map((c) => [c, rateRuleSchema])) as Record<
    (typeof tokenRateClasses)[number],
    typeof rateRuleSchema
  >,
} as const;

/** A token as lists show it: never its secret, never its hash. */
export const tokenViewSchema = {
  type: 'object',
  required: [
    'id',
    'name',
    'scopes',
    'devices',
    'created_at',
    'expires_at',
    'last_used_at',
    'revoked_at',
    'rate_limits',
  ],
  additionalProperties: false,
  properties: {
    id: tokenIdSchema,
    name: labelSchema,
    scopes: scopesSchema,
    /** The device names it may act for; null: any device. */
    devices: { type: ['array', 'null'], items: deviceNameSchema },
    created_at: dateTimeSchema,
    /** null: never expires. */
    expires_at: nullableDateTimeSchema,
    /** The latest use a gateway reported (at most a minute old, per gateway); null: never used. */
    last_used_at: nullableDateTimeSchema,
    revoked_at: nullableDateTimeSchema,
    rate_limits: tokenRateLimitsSchema,
  },
} as const;

/** POST /tokens. */
export const tokenCreateRequestSchema = {
  type: 'object',
  required: ['name', 'scopes'],
  additionalProperties: false,
  properties: {
    name: labelSchema,
    scopes: scopesSchema,
    /** Bind it to these devices; absent or null: any device. */
    devices: { type: ['array', 'null'], minItems: 1, maxItems: 1000, items: deviceNameSchema },
    /** Absent or null: never expires. Must be in the future. */
    expires_at: nullableDateTimeSchema,
    rate_limits: tokenRateLimitsSchema,
  },
} as const;

/** What POST /tokens and POST /enroll answer: the token, and its secret, shown this once. */
export const tokenCreatedSchema = {
  type: 'object',
  required: ['token', 'secret'],
  additionalProperties: false,
  properties: {
    token: tokenViewSchema,
    /** `sf_` + 43 characters: use it as `Authorization: Bearer <secret>`; it is never shown again. */
    secret: { type: 'string', pattern: '^sf_[A-Za-z0-9_-]{43}$' },
  },
} as const;

export const tokenListSchema = {
  type: 'object',
  required: ['tokens'],
  additionalProperties: false,
  properties: { tokens: { type: 'array', items: tokenViewSchema } },
} as const;

/** DELETE /tokens/{id}: the token as it is now (revoked). */
export const tokenRevokedSchema = {
  type: 'object',
  required: ['token'],
  additionalProperties: false,
  properties: { token: tokenViewSchema },
} as const;

/**
 * Which device names a code enrols: `*` stands for any run of characters, `?` for one, the
 * rest matches itself, the whole name (`lab-*` takes `lab-17`, not `old-lab-17`).
 */
export const devicePatternSchema = {
  type: 'string',
  minLength: 1,
  maxLength: 200,
  pattern: '^[^\\u0000-\\u001f\\u007f]*$',
} as const;

/** An enrolment code as lists show it: never the code, never its hash. */
export const enrolmentCodeViewSchema = {
  type: 'object',
  required: [
    'id',
    'name',
    'scopes',
    'device_pattern',
    'uses',
    'uses_left',
    'created_at',
    'expires_at',
    'revoked_at',
  ],
  additionalProperties: false,
  properties: {
    id: enrolmentCodeIdSchema,
    name: labelSchema,
    /** The scopes of the tokens it makes. */
    scopes: scopesSchema,
    device_pattern: devicePatternSchema,
    uses: { type: 'integer', minimum: 1 },
    uses_left: { type: 'integer', minimum: 0 },
    created_at: dateTimeSchema,
    expires_at: nullableDateTimeSchema,
    revoked_at: nullableDateTimeSchema,
  },
} as const;

/** POST /enrolment-codes. */
export const enrolmentCodeCreateRequestSchema = {
  type: 'object',
  required: ['name', 'scopes', 'device_pattern', 'uses'],
  additionalProperties: false,
  properties: {
    name: labelSchema,
    scopes: scopesSchema,
    device_pattern: devicePatternSchema,
    uses: { type: 'integer', minimum: 1, maximum: 100_000 },
    /** Absent or null: never expires (say one: a code is a bearer secret too). In the future. */
    expires_at: nullableDateTimeSchema,
  },
} as const;

export const enrolmentCodeCreatedSchema = {
  type: 'object',
  required: ['code', 'secret'],
  additionalProperties: false,
  properties: {
    code: enrolmentCodeViewSchema,
    /** `sfe_` + 43 characters: what desktops send to POST /enroll; never shown again. */
    secret: { type: 'string', pattern: '^sfe_[A-Za-z0-9_-]{43}$' },
  },
} as const;

export const enrolmentCodeListSchema = {
  type: 'object',
  required: ['codes'],
  additionalProperties: false,
  properties: { codes: { type: 'array', items: enrolmentCodeViewSchema } },
} as const;

export const enrolmentCodeRevokedSchema = {
  type: 'object',
  required: ['code'],
  additionalProperties: false,
  properties: { code: enrolmentCodeViewSchema },
} as const;

/** POST /enroll: the code, and the name of the device asking (its token is bound to it). */
export const enrolRequestSchema = {
  type: 'object',
  required: ['code', 'device_name'],
  additionalProperties: false,
  properties: {
    code: { type: 'string', minLength: 1, maxLength: 100 },
    device_name: deviceNameSchema,
  },
} as const;

export type TokenView = FromSchema<typeof tokenViewSchema>;
export type TokenRateLimitsView = FromSchema<typeof tokenRateLimitsSchema>;
export type TokenCreateRequest = FromSchema<typeof tokenCreateRequestSchema>;
export type TokenCreated = FromSchema<typeof tokenCreatedSchema>;
export type TokenList = FromSchema<typeof tokenListSchema>;
export type EnrolmentCodeView = FromSchema<typeof enrolmentCodeViewSchema>;
export type EnrolmentCodeCreateRequest = FromSchema<typeof enrolmentCodeCreateRequestSchema>;
export type EnrolmentCodeCreated = FromSchema<typeof enrolmentCodeCreatedSchema>;
export type EnrolmentCodeList = FromSchema<typeof enrolmentCodeListSchema>;
export type EnrolRequest = FromSchema<typeof enrolRequestSchema>;

/** Where the routes are (the gateway's routers and its 405 table read these). */
export const tokenPaths = {
  tokens: '/tokens',
  token: '/tokens/{id}',
  codes: '/enrolment-codes',
  code: '/enrolment-codes/{id}',
  enroll: '/enroll',
} as const;

const exampleToken: TokenView = {
  id: 'tok_3f9c2a7d41b0e865',
  name: 'desk-17',
  scopes: ['ingest'],
  devices: ['desk-17'],
  created_at: '2026-11-29T10:00:00.000Z',
  expires_at: null,
  last_used_at: '2026-11-29T10:41:00.000Z',
  revoked_at: null,
  rate_limits: null,
};
const exampleSecret = 'sf_q6D8Yw3kZr0pJ2xVnL5bT9uHc4mE7sAaGfKiR1oWdXy';
const exampleCode: EnrolmentCodeView = {
  id: 'enr_0b7e41c29a5d3f16',
  name: 'lab desktops',
  scopes: ['ingest'],
  device_pattern: 'lab-*',
  uses: 200,
  uses_left: 199,
  created_at: '2026-11-29T09:00:00.000Z',
  expires_at: '2026-12-06T09:00:00.000Z',
  revoked_at: null,
};
const idParameter = (what: string, schema: object) => ({
  name: 'id',
  description: `The ${what}'s id (from its list).`,
  schema: schema as { [key: string]: never },
});
/** Stored with the token store, served by the ingest workers: they may be away (503) or answer nonsense (502). */
const adminErrors = [...authErrors, 502, 503] as const;

export const tokenRoutes: readonly ApiOperation[] = [
  {
    method: 'post',
    path: tokenPaths.tokens,
    operationId: 'createToken',
    tag: 'auth',
    summary: 'Create a token; its secret is in this answer only',
    description:
      'The secret (`sf_` + 32 random bytes) is generated by the gateway and never stored: the ' +
      'store keeps its SHA-256. It works on every gateway within a second. `devices` binds it ' +
      'to device names; `rate_limits` replaces GATEWAY_RATE_LIMIT_* for the classes it names.',
    scope: 'tokens:admin',
    request: {
      schema: tokenCreateRequestSchema,
      required: true,
      examples: {
        producer: {
          summary: 'A capture producer bound to its desktop',
          value: { name: 'desk-17', scopes: ['ingest'], devices: ['desk-17'] },
        },
      },
    },
    response: {
      schema: tokenCreatedSchema,
      description: 'Created.',
      status: 201,
      example: { token: { ...exampleToken, last_used_at: null }, secret: exampleSecret },
    },
    errors: [...adminErrors, ...bodyErrors],
  },
  {
    method: 'get',
    path: tokenPaths.tokens,
    operationId: 'listTokens',
    tag: 'auth',
    summary: 'The stored tokens, oldest first',
    description:
      'Never a secret. Revoked tokens only with `include_revoked=true`. Tokens of ' +
      'GATEWAY_TOKENS and the local token are not stored and not listed.',
    scope: 'tokens:admin',
    parameters: [
      {
        name: 'include_revoked',
        description: '`true`: revoked tokens too.',
        schema: { type: 'boolean' },
      },
    ],
    response: {
      schema: tokenListSchema,
      description: 'The tokens.',
      example: { tokens: [exampleToken] },
    },
    errors: [...adminErrors, 400],
  },
  {
    method: 'delete',
    path: tokenPaths.token,
    operationId: 'revokeToken',
    tag: 'auth',
    summary: 'Revoke a token: refused on every gateway within a second',
    description:
      'Kept in lists (with `include_revoked`) and audit rows; revoking it again answers it as ' +
      'it is (its first revocation time).',
    scope: 'tokens:admin',
    pathParameters: [idParameter('token', tokenIdSchema)],
    response: {
      schema: tokenRevokedSchema,
      description: 'The token, revoked.',
      example: { token: { ...exampleToken, revoked_at: '2026-11-29T11:02:00.000Z' } },
    },
    errors: [...adminErrors, 404],
  },
  {
    method: 'post',
    path: tokenPaths.codes,
    operationId: 'createEnrolmentCode',
    tag: 'auth',
    summary: 'Create an enrolment code; the code is in this answer only',
    description:
      'Desktops trade it for tokens of their own (POST /enroll) while it has uses left, has ' +
      "not expired and is not revoked; each token has the code's scopes and is bound to the " +
      'name of the device that enrolled, which must match `device_pattern`. Stored as a hash.',
    scope: 'tokens:admin',
    request: {
      schema: enrolmentCodeCreateRequestSchema,
      required: true,
      examples: {
        lab: {
          summary: '200 lab desktops, for a week',
          value: {
            name: 'lab desktops',
            scopes: ['ingest'],
            device_pattern: 'lab-*',
            uses: 200,
            expires_at: '2026-12-06T09:00:00Z',
          },
        },
      },
    },
    response: {
      schema: enrolmentCodeCreatedSchema,
      description: 'Created.',
      status: 201,
      example: {
        code: { ...exampleCode, uses_left: 200 },
        secret: 'sfe_Vt0x8JmQ2cR5aLk9WnZ3pE7yHs1uBd4gFoTiXq6rNvM',
      },
    },
    errors: [...adminErrors, ...bodyErrors],
  },
  {
    method: 'get',
    path: tokenPaths.codes,
    operationId: 'listEnrolmentCodes',
    tag: 'auth',
    summary: 'The enrolment codes, oldest first',
    description: 'Never a code. Revoked ones only with `include_revoked=true`.',
    scope: 'tokens:admin',
    parameters: [
      {
        name: 'include_revoked',
        description: '`true`: revoked codes too.',
        schema: { type: 'boolean' },
      },
    ],
    response: {
      schema: enrolmentCodeListSchema,
      description: 'The codes.',
      example: { codes: [exampleCode] },
    },
    errors: [...adminErrors, 400],
  },
  {
    method: 'delete',
    path: tokenPaths.code,
    operationId: 'revokeEnrolmentCode',
    tag: 'auth',
    summary: 'Revoke an enrolment code: it enrols no more desktops',
    description: 'The tokens it made stay valid (revoke them one by one).',
    scope: 'tokens:admin',
    pathParameters: [idParameter('enrolment code', enrolmentCodeIdSchema)],
    response: {
      schema: enrolmentCodeRevokedSchema,
      description: 'The code, revoked.',
      example: { code: { ...exampleCode, revoked_at: '2026-11-29T11:05:00.000Z' } },
    },
    errors: [...adminErrors, 404],
  },
  {
    method: 'post',
    path: tokenPaths.enroll,
    operationId: 'enroll',
    tag: 'auth',
    summary: "Trade an enrolment code for this device's own token",
    description:
      "No other credential. The token has the code's scopes and is bound to `device_name`; its " +
      'secret is in this answer only. A code that is unknown, revoked, expired or used up, or a ' +
      'name its pattern does not match, gets 403 with the reason as `code` ' +
      '(`enrolment_code_invalid`, `enrolment_code_revoked`, `enrolment_code_expired`, ' +
      '`enrolment_code_used_up`, `device_not_allowed`). Counted per address like requests ' +
      'without a valid token (GATEWAY_RATE_LIMIT_UNAUTHENTICATED).',
    scope: null,
    request: {
      schema: enrolRequestSchema,
      required: true,
      examples: {
        desktop: {
          summary: 'A lab desktop enrolling',
          value: { code: 'sfe_Vt0x8JmQ2cR5aLk9WnZ3pE7yHs1uBd4gFoTiXq6rNvM', device_name: 'lab-17' },
        },
      },
    },
    response: {
      schema: tokenCreatedSchema,
      description: 'Enrolled.',
      status: 201,
      example: {
        token: { ...exampleToken, name: 'lab-17 (lab desktops)', devices: ['lab-17'] },
        secret: exampleSecret,
      },
    },
    errors: [...bodyErrors, 403, 405, 429, 500, 502, 503],
  },
];

export const tokensContract = {
  validators: {
    tokenCreateRequest: compileValidator<TokenCreateRequest>(
      tokenCreateRequestSchema,
      'token request',
    ),
    tokenCreated: compileValidator<TokenCreated>(tokenCreatedSchema, 'created token'),
    tokenView: compileValidator<TokenView>(tokenViewSchema, 'token'),
    tokenList: compileValidator<TokenList>(tokenListSchema, 'token list'),
    tokenRevoked: compileValidator<{ token: TokenView }>(tokenRevokedSchema, 'revoked token'),
    enrolmentCodeCreateRequest: compileValidator<EnrolmentCodeCreateRequest>(
      enrolmentCodeCreateRequestSchema,
      'enrolment code request',
    ),
    enrolmentCodeView: compileValidator<EnrolmentCodeView>(
      enrolmentCodeViewSchema,
      'enrolment code',
    ),
    enrolmentCodeCreated: compileValidator<EnrolmentCodeCreated>(
      enrolmentCodeCreatedSchema,
      'created enrolment code',
    ),
    enrolmentCodeList: compileValidator<EnrolmentCodeList>(
      enrolmentCodeListSchema,
      'enrolment code list',
    ),
    enrolmentCodeRevoked: compileValidator<{ code: EnrolmentCodeView }>(
      enrolmentCodeRevokedSchema,
      'revoked enrolment code',
    ),
    enrolRequest: compileValidator<EnrolRequest>(enrolRequestSchema, 'enrolment'),
  },
  components: {
    TokenView: tokenViewSchema,
    TokenRateLimits: tokenRateLimitsSchema,
    TokenCreateRequest: tokenCreateRequestSchema,
    TokenCreated: tokenCreatedSchema,
    TokenList: tokenListSchema,
    TokenRevoked: tokenRevokedSchema,
    EnrolmentCodeView: enrolmentCodeViewSchema,
    EnrolmentCodeCreateRequest: enrolmentCodeCreateRequestSchema,
    EnrolmentCodeCreated: enrolmentCodeCreatedSchema,
    EnrolmentCodeList: enrolmentCodeListSchema,
    EnrolmentCodeRevoked: enrolmentCodeRevokedSchema,
    EnrolRequest: enrolRequestSchema,
  },
  operations: tokenRoutes,
} satisfies Contract;
