/**
 * GET /audit: the audit trail (ADR 0019), newest first: every operator command, token and
 * enrolment change, delete and restore, as rows the ingest workers keep in their store.
 */
import type { FromSchema } from 'json-schema-to-ts';
import { dateTimeSchema, deviceNameSchema } from '../common.schema';
import { authErrors, type ApiOperation, type Contract } from '../contract';
import { compileValidator } from '../validate';

/** Rows a page holds when `limit` is absent, and at most. */
export const auditDefaultLimit = 100;
export const auditMaxLimit = 1000;

/** What happened, as rows name it. */
export const auditActions = [
  'operator.press',
  'operator.click',
  'operator.type',
  'token.create',
  'token.revoke',
  'token.enrol',
  'enrolment_code.create',
  'enrolment_code.revoke',
  'data.delete_range',
  'data.delete_device',
  'archive.restore',
] as const;
export type AuditAction = (typeof auditActions)[number];

/** A plain JSON value of a row's details. */
const detailsSchema = { type: 'object', maxProperties: 50 } as const;

/** One audited fact. */
export const auditRowSchema = {
  type: 'object',
  required: [
    'id',
    'at',
    'actor',
    'action',
    'device',
    'outcome',
    'outcome_code',
    'duration_ms',
    'details',
  ],
  additionalProperties: false,
  properties: {
    /** Unique; the message id it came in (a redelivered one is stored once). */
    id: { type: 'string', minLength: 1, maxLength: 128 },
    at: dateTimeSchema,
    /** The token id that acted (`tok_...`, a GATEWAY_TOKENS id, `local`), or `enrolment:<code id>`. */
    actor: { type: 'string', minLength: 1, maxLength: 256 },
    action: { enum: auditActions },
    /** The device acted on; null for token changes and deletes of every device. */
    device: { anyOf: [deviceNameSchema, { type: 'null' }] },
    /** ok: done; refused: turned down before it ran (scope, device, validation); failed: tried and failed. */
    outcome: { enum: ['ok', 'refused', 'failed'] },
    /** The error code of a refusal or failure (the HTTP body's `code`); null when ok. */
    outcome_code: { type: ['string', 'null'], maxLength: 64 },
    /** How long it took at the gateway; null when not measured. */
    duration_ms: { type: ['number', 'null'], minimum: 0 },
    /** What was asked: element index, key and modifiers, time range, token id... */
    details: detailsSchema,
  },
} as const;

export const auditPageSchema = {
  type: 'object',
  required: ['rows', 'next_cursor'],
  additionalProperties: false,
  properties: {
    rows: { type: 'array', items: auditRowSchema },
    /** Pass it as `cursor` for the next (older) page; null: this was the last. */
    next_cursor: { type: ['string', 'null'] },
  },
} as const;

export type AuditRowView = FromSchema<typeof auditRowSchema>;
export type AuditPageView = FromSchema<typeof auditPageSchema>;

export const auditPath = '/audit';

export const auditRoute: ApiOperation = {
  method: 'get',
  path: auditPath,
  operationId: 'readAudit',
  tag: 'auth',
  summary: 'The audit trail, newest first, paged by cursor',
  description:
    'Operator commands (who, device, element, key, outcome, duration), token and enrolment ' +
    'changes, deletes and restores. Filters combine; paging is by `cursor` (rows written ' +
    'meanwhile never shift a page). Rows older than AUDIT_RETENTION_DAYS (90) are deleted by ' +
    'the archive worker.',
  scope: 'audit:read',
  parameters: [
    { name: 'device', description: 'Only rows about this device.', schema: deviceNameSchema },
    {
      name: 'token',
      description: 'Only rows of this actor (a token id).',
      schema: { type: 'string', minLength: 1, maxLength: 256 },
    },
    { name: 'action', description: 'Only rows of this action.', schema: { enum: auditActions } },
    { name: 'from', description: 'Rows at or after this time.', schema: dateTimeSchema },
    { name: 'to', description: 'Rows before this time.', schema: dateTimeSchema },
    {
      name: 'limit',
      description: `Rows per page (default ${auditDefaultLimit}, at most ${auditMaxLimit}).`,
      schema: { type: 'integer', minimum: 1, maximum: auditMaxLimit },
    },
    {
      name: 'cursor',
      description: "The previous page's next_cursor.",
      schema: { type: 'string', maxLength: 512 },
    },
  ],
  response: {
    schema: auditPageSchema,
    description: 'One page of rows.',
    example: {
      rows: [
        {
          id: '5b0f3c1e-9d7a-4e2b-8f61-2a4c9e0d7b13',
          at: '2026-11-29T10:42:07.312Z',
          actor: 'tok_3f9c2a7d41b0e865',
          action: 'operator.press',
          device: 'desk-17',
          outcome: 'ok',
          outcome_code: null,
          duration_ms: 84,
          details: { element_index: 12, key: 'a', modifiers: ['ctrl'] },
        },
      ],
      next_cursor: null,
    },
  },
  errors: [...authErrors, 400, 502, 503],
};

export const auditContract = {
  validators: {
    auditRow: compileValidator<AuditRowView>(auditRowSchema, 'audit row'),
    auditPage: compileValidator<AuditPageView>(auditPageSchema, 'audit page'),
  },
  components: { AuditRow: auditRowSchema, AuditPage: auditPageSchema },
  operations: [auditRoute],
} satisfies Contract;
