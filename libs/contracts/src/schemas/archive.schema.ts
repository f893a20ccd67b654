import type { FieldError } from '../errors';
import { limits } from '../limits';
import { parseDateTime } from '../timestamp';
import { dateTimeSchema, deviceNameSchema } from './common';
import { archiveStatusSchema } from './results.schema';
import { dataDeleteCommandRequestSchema, dataDeletedCountsSchema } from './data-delete.schema';

const retentionDays = { type: 'integer', minimum: 1, maximum: limits.maxRetentionDays } as const;

/** POST /archive/configure: change what the worker does from its next pass on. */
export const archiveConfigureRequestSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    enabled: { type: 'boolean' },
    retention_days: retentionDays,
  },
} as const;

/** POST /archive/init as screenpipe's desktop app sends it; 409 once initialised. */
export const archiveInitRequestSchema = {
  type: 'object',
  properties: {
    retention_days: retentionDays,
  },
} as const;

/** POST /archive/restore and `npm run archive:restore`: put archived items back, idempotently. */
export const archiveRestoreRequestSchema = {
  type: 'object',
  required: ['from', 'to'],
  additionalProperties: false,
  properties: {
    from: dateTimeSchema,
    to: dateTimeSchema,
    device_name: deviceNameSchema,
  },
} as const;

/**
 * A restore range must hold something: `from` before `to` (`to` is exclusive), compared as
 * instants (offsets applied). A range that ends before it starts would restore nothing and say
 * "0 items restored"; it is a 400 naming both fields instead.
 */
export function archiveRestoreRangeErrors(
  request: { from: string; to: string },
  prefix = '',
): FieldError[] {
  if (parseDateTime(request.from) < parseDateTime(request.to)) return [];
  return [
    { path: `${prefix}from`, rule: 'range', detail: 'from must be before to (to is exclusive)' },
    { path: `${prefix}to`, rule: 'range', detail: 'to must be after from (to is exclusive)' },
  ];
}

/** Payload of archive.command on `archive.rpc`: what the gateway asks the archive worker. */
export const archiveCommandSchema = {
  type: 'object',
  // Only the branch the tag names is checked, so removeAdditional cannot strip another's fields.
  discriminator: { propertyName: 'action' },
  required: ['action'],
  oneOf: [
    {
      type: 'object',
      required: ['action'],
      additionalProperties: false,
      properties: { action: { const: 'status' } },
    },
    {
      type: 'object',
      required: ['action'],
      additionalProperties: false,
      properties: { action: { const: 'run' } },
    },
    {
      type: 'object',
      required: ['action', 'request'],
      additionalProperties: false,
      properties: { action: { const: 'configure' }, request: archiveConfigureRequestSchema },
    },
    {
      type: 'object',
      required: ['action', 'request'],
      additionalProperties: false,
      properties: { action: { const: 'init' }, request: archiveInitRequestSchema },
    },
    {
      type: 'object',
      required: ['action', 'request'],
      additionalProperties: false,
      properties: { action: { const: 'restore' }, request: archiveRestoreRequestSchema },
    },
    {
      type: 'object',
      required: ['action', 'request'],
      additionalProperties: false,
      properties: { action: { const: 'delete' }, request: dataDeleteCommandRequestSchema },
    },
  ],
} as const;

/**
 * Archived objects a restore could not read (a key that is not configured, damage, a missing
 * object), by name and why, at most limits.maxUnreadableListed of them: their items are not
 * back, every other item is.
 */
const unreadableSchema = {
  type: 'array',
  maxItems: limits.maxUnreadableListed,
  items: {
    type: 'object',
    required: ['key', 'reason'],
    additionalProperties: false,
    properties: {
      key: { type: 'string', maxLength: 1024 },
      reason: { type: 'string', maxLength: 2000 },
    },
  },
} as const;

/** How many archived objects a restore could not read, all of them (the list stops at 100). */
const unreadableCountSchema = { type: 'integer', minimum: 0 } as const;

/**
 * Payload of archive.reply: the status after the command (restore adds how many items came
 * back, and the archived objects it could not read), or why the command was refused
 * (`conflict`: init when already initialised, a restore while the archive is enabled or busy, a
 * delete while the archive is busy).
 */
export const archiveReplySchema = {
  type: 'object',
  discriminator: { propertyName: 'outcome' },
  required: ['outcome'],
  oneOf: [
    {
      type: 'object',
      required: ['outcome', 'status'],
      additionalProperties: false,
      properties: {
        outcome: { const: 'ok' },
        status: archiveStatusSchema,
        restored: { type: 'integer', minimum: 0 },
        unreadable: unreadableSchema,
        unreadable_count: unreadableCountSchema,
        /** What a delete did (POST /data/delete-range, /data/delete-device). */
        deleted: dataDeletedCountsSchema,
      },
    },
    {
      type: 'object',
      required: ['outcome', 'code', 'message'],
      additionalProperties: false,
      properties: {
        outcome: { const: 'refused' },
        code: { enum: ['conflict', 'validation_failed', 'store_unavailable', 'failed'] },
        message: { type: 'string' },
      },
    },
  ],
} as const;

/**
 * Response of POST /archive/configure, /archive/init, /archive/run and /archive/restore: the
 * operation result screenpipe's clients check, plus the archive status after the command
 * (`restored`: how many items a restore put back, counting ones already present;
 * `unreadable` and `unreadable_count`: the archived objects it could not read, whose items are
 * not back, while every other item is).
 */
export const archiveActionResultSchema = {
  type: 'object',
  required: ['success', 'message', 'status'],
  additionalProperties: false,
  properties: {
    success: { const: true },
    message: { type: 'string' },
    status: archiveStatusSchema,
    restored: { type: 'integer', minimum: 0 },
    unreadable: unreadableSchema,
    unreadable_count: unreadableCountSchema,
  },
} as const;
