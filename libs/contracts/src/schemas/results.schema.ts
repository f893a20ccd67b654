import { nullableDateTimeSchema } from './common';

export const operationResultSchema = {
  type: 'object',
  required: ['success', 'message'],
  additionalProperties: false,
  properties: {
    success: { type: 'boolean' },
    message: { type: 'string' },
  },
} as const;

/** One failed rule: where in the body (`content.data[0].timestamp`), which rule, and why. */
export const fieldErrorSchema = {
  type: 'object',
  required: ['path', 'rule', 'detail'],
  additionalProperties: false,
  properties: {
    path: { type: 'string' },
    rule: { type: 'string' },
    detail: { type: 'string' },
  },
} as const;

/** Every 4xx/5xx body: which fields failed which rule, so a client can fix its request. */
export const errorBodySchema = {
  type: 'object',
  required: ['success', 'message', 'errors'],
  additionalProperties: false,
  properties: {
    success: { const: false },
    message: { type: 'string' },
    errors: { type: 'array', items: fieldErrorSchema },
    /**
     * The error's kind (validation_failed, conflict, outcome_unknown ...), for clients that
     * must tell apart errors of one status; absent on errors raised before routing (auth).
     */
    code: { type: 'string' },
  },
} as const;

const count = { type: 'integer', minimum: 0 } as const;

/**
 * GET /archive/status. Every number is always a number (screenpipe's page crashes on null);
 * times are ISO 8601 UTC or null until first set; sizes in bytes.
 */
export const archiveStatusSchema = {
  type: 'object',
  additionalProperties: false,
  required: [
    'enabled',
    'retention_days',
    'watermark',
    'last_cleanup',
    'last_error',
    'storage_used',
    'storage_limit',
    'pending_count',
    'is_uploading',
    'chunks_uploaded',
    'media_files_uploaded',
    'media_files_pending',
  ],
  properties: {
    enabled: { type: 'boolean' },
    retention_days: { type: 'integer', minimum: 1 },
    watermark: nullableDateTimeSchema,
    last_cleanup: nullableDateTimeSchema,
    last_error: { type: ['string', 'null'] },
    storage_used: count,
    storage_limit: count,
    pending_count: count,
    is_uploading: { type: 'boolean' },
    chunks_uploaded: count,
    media_files_uploaded: count,
    media_files_pending: count,
  },
} as const;
