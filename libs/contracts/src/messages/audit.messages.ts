/**
 * audit.record on the `audit` exchange -> quorum queue `audit.v1` (the gateway's audited facts,
 * written as rows by the ingest workers, which own the store), and audit.request / audit.reply
 * on `search.rpc` (GET /audit: a read of the store, like a search). ADR 0019.
 */
import type { FromSchema } from 'json-schema-to-ts';
import { dateTimeSchema, deviceNameSchema } from '../common.schema';
import type { Contract } from '../contract';
import { auditActions, auditMaxLimit, auditRowSchema } from '../http/audit.route';
import { compileValidator } from '../validate';
import { refusedReply } from './refused-reply';

/** Payload of audit.record: one row as GET /audit shows it; its id is the row's. */
export const auditRecordSchema = auditRowSchema;

/** GET /audit as the gateway resolved it. */
export const auditRequestSchema = {
  type: 'object',
  required: ['limit'],
  additionalProperties: false,
  properties: {
    device: deviceNameSchema,
    actor: { type: 'string', minLength: 1, maxLength: 256 },
    action: { enum: auditActions },
    from: dateTimeSchema,
    to: dateTimeSchema,
    limit: { type: 'integer', minimum: 1, maximum: auditMaxLimit },
    cursor: { type: 'string', maxLength: 512 },
  },
} as const;

export const auditReplySchema = {
  type: 'object',
  discriminator: { propertyName: 'outcome' },
  required: ['outcome'],
  oneOf: [
    {
      type: 'object',
      required: ['outcome', 'rows', 'next_cursor'],
      additionalProperties: false,
      properties: {
        outcome: { const: 'ok' },
        rows: { type: 'array', items: auditRowSchema },
        next_cursor: { type: ['string', 'null'] },
      },
    },
    // validation_failed: a cursor that is not one of ours (the gateway answers 400).
    refusedReply(['validation_failed', 'store_unavailable', 'failed']),
  ],
} as const;

export type AuditRecord = FromSchema<typeof auditRecordSchema>;
export type AuditRequest = FromSchema<typeof auditRequestSchema>;
export type AuditReply = FromSchema<typeof auditReplySchema>;

export const auditMessagesContract = {
  validators: {
    auditRecord: compileValidator<AuditRecord>(auditRecordSchema, 'audit record'),
    auditRequest: compileValidator<AuditRequest>(auditRequestSchema, 'audit request'),
    auditReply: compileValidator<AuditReply>(auditReplySchema, 'audit reply'),
  },
  components: {},
  operations: [],
} satisfies Contract;
