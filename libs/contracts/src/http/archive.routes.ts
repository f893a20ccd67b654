/** The archive's routes: its status, configuration, a pass now, and restoring a time range. */
import type { FromSchema } from 'json-schema-to-ts';
import { dateTimeSchema, deviceNameSchema, nullableDateTimeSchema } from '../common.schema';
import {
  archiveErrors,
  bodyErrors,
  type ApiOperation,
  type Contract,
  type Json,
} from '../contract';
import type { FieldError } from '../errors';
import { limits } from '../limits';
import { parseDateTime } from '../timestamp';
import { compileValidator } from '../validate';

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

/**
 * Archived objects a restore could not read (a key that is not configured, damage, a missing
 * object), by name and why, at most limits.maxUnreadableListed of them: their items are not
 * back, every other item is.
 */
export const unreadableSchema = {
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
export const unreadableCountSchema = { type: 'integer', minimum: 0 } as const;

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

export type ArchiveStatus = FromSchema<typeof archiveStatusSchema>;
export type ArchiveConfigureRequest = FromSchema<typeof archiveConfigureRequestSchema>;
export type ArchiveInitRequest = FromSchema<typeof archiveInitRequestSchema>;
export type ArchiveRestoreRequest = FromSchema<typeof archiveRestoreRequestSchema>;
export type ArchiveActionResult = FromSchema<typeof archiveActionResultSchema>;

const sampleStatus = {
  enabled: true,
  retention_days: 7,
  watermark: '2026-11-15T00:00:00.000Z',
  last_cleanup: '2026-11-22T03:00:00.000Z',
  last_error: null,
  storage_used: 1_048_576,
  storage_limit: 0,
  pending_count: 12,
  is_uploading: false,
  chunks_uploaded: 3,
  media_files_uploaded: 40,
  media_files_pending: 0,
} satisfies Json;

export const archiveStatusRoute: ApiOperation = {
  method: 'get',
  path: '/archive/status',
  operationId: 'archiveStatus',
  tag: 'archive',
  summary: "The archive's state and counters",
  description:
    'Asked of the archive workers over the broker. The query (`?timezone=`) is accepted ' +
    'whatever its value and ignored: every time is ISO 8601 UTC with `Z`.',
  scope: 'archive:read',
  parameters: [
    {
      name: 'timezone',
      description: "Accepted (screenpipe's UI sends it) and ignored: times are UTC.",
      schema: { type: 'string' },
    },
  ],
  response: {
    schema: archiveStatusSchema,
    description: 'The archive status.',
    example: sampleStatus,
  },
  errors: archiveErrors,
};

export const archiveConfigureRoute: ApiOperation = {
  method: 'post',
  path: '/archive/configure',
  operationId: 'archiveConfigure',
  tag: 'archive',
  summary: 'Turn the archive on or off, change its retention',
  description: '`{}` (or no body with a JSON Content-Type) changes nothing and answers the status.',
  scope: 'archive:write',
  request: {
    schema: archiveConfigureRequestSchema,
    required: false,
    examples: {
      enable: {
        summary: 'Archive items older than 7 days',
        value: { enabled: true, retention_days: 7 },
      },
    },
  },
  response: {
    schema: archiveActionResultSchema,
    description: 'The status after the change.',
    example: { success: true, message: 'archive configuration updated', status: sampleStatus },
  },
  errors: [...archiveErrors, ...bodyErrors],
};

export const archiveInitRoute: ApiOperation = {
  method: 'post',
  path: '/archive/init',
  operationId: 'archiveInit',
  tag: 'archive',
  summary: 'Initialise and enable the archive',
  description:
    "As screenpipe's desktop app sends it; its cloud `token` is tolerated and never relayed. " +
    '409 when the archive is already initialised.',
  scope: 'archive:write',
  request: {
    schema: archiveInitRequestSchema,
    required: false,
    examples: { init: { summary: 'Keep 30 days locally', value: { retention_days: 30 } } },
  },
  response: { schema: archiveActionResultSchema, description: 'The status after initialising.' },
  errors: [...archiveErrors, ...bodyErrors, 409],
};

export const archiveRunRoute: ApiOperation = {
  method: 'post',
  path: '/archive/run',
  operationId: 'archiveRun',
  tag: 'archive',
  summary: 'Start an archive pass now',
  description: 'No body is read (whatever is sent is ignored).',
  scope: 'archive:write',
  response: { schema: archiveActionResultSchema, description: 'The status once the pass started.' },
  errors: archiveErrors,
};

export const archiveRestoreRoute: ApiOperation = {
  method: 'post',
  path: '/archive/restore',
  operationId: 'archiveRestore',
  tag: 'archive',
  summary: 'Put archived items of a time range back, idempotently',
  description:
    'Needs the archive disabled first (409 otherwise), so the next pass does not move the ' +
    "items out again. A restore that outlasts the gateway's restore timeout answers 503 and " +
    'goes on; sending it again is safe. `from` must be before `to` (`to` is exclusive): ' +
    'otherwise a 400 naming both fields (rule `range`). Never beside an archive pass or a ' +
    'rekey: it waits up to 5 s for one to end, then is a 409 naming it. Archived objects it ' +
    'cannot read (a key that is not configured, damage) are named in `unreadable` and ' +
    '`last_error`; every other item is restored.',
  scope: 'archive:write',
  request: {
    schema: archiveRestoreRequestSchema,
    required: true,
    examples: {
      day: {
        summary: "One device's day",
        value: {
          from: '2026-11-01T00:00:00Z',
          to: '2026-11-02T00:00:00Z',
          device_name: 'MacBook Pro',
        },
      },
    },
  },
  response: {
    schema: archiveActionResultSchema,
    description:
      'The status after the restore, with `restored`: items put back, and `unreadable`: the archived objects it could not read.',
  },
  errors: [...archiveErrors, ...bodyErrors, 409],
};

export const archiveContract = {
  validators: {
    archiveStatus: compileValidator<ArchiveStatus>(archiveStatusSchema, 'archive status'),
    archiveConfigureRequest: compileValidator<ArchiveConfigureRequest>(
      archiveConfigureRequestSchema,
      'archive configure request',
    ),
    archiveInitRequest: compileValidator<ArchiveInitRequest>(
      archiveInitRequestSchema,
      'archive init request',
    ),
    archiveRestoreRequest: compileValidator<ArchiveRestoreRequest>(
      archiveRestoreRequestSchema,
      'archive restore request',
      (request) => archiveRestoreRangeErrors(request),
    ),
    archiveActionResult: compileValidator<ArchiveActionResult>(
      archiveActionResultSchema,
      'archive action result',
    ),
  },
  components: {
    ArchiveStatus: archiveStatusSchema,
    ArchiveConfigureRequest: archiveConfigureRequestSchema,
    ArchiveInitRequest: archiveInitRequestSchema,
    ArchiveRestoreRequest: archiveRestoreRequestSchema,
    ArchiveActionResult: archiveActionResultSchema,
  },
  operations: [
    archiveStatusRoute,
    archiveConfigureRoute,
    archiveInitRoute,
    archiveRunRoute,
    archiveRestoreRoute,
  ],
} satisfies Contract;
