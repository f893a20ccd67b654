import type { FromSchema } from 'json-schema-to-ts';
import { dateTimeSchema, deviceNameSchema } from '../common.schema';
import type { Contract } from '../contract';
import { compileValidator } from '../validate';
import { refusedReply } from './refused-reply';
import {
  archiveConfigureRequestSchema,
  archiveInitRequestSchema,
  archiveRestoreRangeErrors,
  archiveRestoreRequestSchema,
  archiveStatusSchema,
  unreadableCountSchema,
  unreadableSchema,
} from '../http/archive.routes';
import { dataDeletedCountsSchema } from '../http/data-delete.routes';

/**
 * What the gateway asks the archive worker (archive.command `delete`): the items of [from, to)
 * (either bound absent: unbounded on that side), of one device when named, go from the content
 * store, their search entries and unreferenced media files with them, and archived items of the
 * range are recorded as deleted so no restore brings them back.
 */
export const dataDeleteCommandRequestSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    from: dateTimeSchema,
    to: dateTimeSchema,
    device_name: deviceNameSchema,
  },
} as const;

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
    refusedReply(['conflict', 'validation_failed', 'store_unavailable', 'failed']),
  ],
} as const;

export type DataDeleteCommandRequest = FromSchema<typeof dataDeleteCommandRequestSchema>;
export type ArchiveCommand = FromSchema<typeof archiveCommandSchema>;
export type ArchiveReply = FromSchema<typeof archiveReplySchema>;

/** archive.command and archive.reply on `archive.rpc` (the archive routes and the data deletes). */
export const archiveMessagesContract = {
  validators: {
    // The worker checks a command again on arrival, relations included.
    archiveCommand: compileValidator<ArchiveCommand>(
      archiveCommandSchema,
      'archive command',
      (command) =>
        command.action === 'restore'
          ? archiveRestoreRangeErrors(command.request, 'request.')
          : command.action === 'delete'
            ? deleteCommandRangeErrors(command.request)
            : [],
    ),
    archiveReply: compileValidator<ArchiveReply>(archiveReplySchema, 'archive reply'),
  },
  components: {},
  operations: [],
} satisfies Contract;

/** A delete command's bounds, when both are given, must hold something (`to` is exclusive). */
function deleteCommandRangeErrors(request: { from?: string; to?: string }) {
  return request.from !== undefined && request.to !== undefined
    ? archiveRestoreRangeErrors({ from: request.from, to: request.to }, 'request.')
    : [];
}
