import type { FromSchema } from 'json-schema-to-ts';
import { deviceNameSchema } from '../common.schema';
import type { Contract } from '../contract';
import { errorCodes } from '../errors';
import { keyNames, modifierNames } from '../keys';
import { limits } from '../limits';
import { compileValidator } from '../validate';
import { fieldErrorSchema } from '../http/common.contract';
import {
  cacheIdSchema,
  listElementsResponseSchema,
  listFilterProperties,
  typeableTextPattern,
} from '../http/operator.routes';

/**
 * The id of the token a command was sent with. A listing remembers it, and a press without
 * cache_id may use only a listing made with the same token (another client's listing: 409).
 */
const requestedBySchema = {
  type: 'string',
  minLength: 1,
  maxLength: limits.maxTokenIdLength,
} as const;

/** What every command on a listed element carries: its timing, token, index and listing. */
const byIndexCommandProperties = {
  timeout_ms: { type: 'integer', minimum: 1 },
  budget_ms: { type: 'integer', minimum: 1 },
  requested_by: requestedBySchema,
  element_index: { type: 'integer', minimum: 0, maximum: limits.maxElementIndex },
  /** The listing element_index refers to; absent = the device's newest listing. */
  cache_id: cacheIdSchema,
} as const;

/**
 * Payload of operator.command (gateway -> one device's agent). Key names are canonical: the
 * gateway resolves aliases and key_combo first. budget_ms is the agent's time to act, counted on
 * its own monotonic clock from the command's receipt; timeout_ms is the gateway's whole wait
 * from sent_at, which the agent also checks on its wall clock (a command that sat in a stalled
 * agent's buffer). See operator-timing.ts: a press never lands after the sender gave up.
 */
export const operatorCommandSchema = {
  type: 'object',
  required: ['action', 'timeout_ms', 'budget_ms'],
  discriminator: { propertyName: 'action' },
  oneOf: [
    {
      type: 'object',
      required: ['action', 'timeout_ms', 'budget_ms', 'requested_by', 'app_name'],
      additionalProperties: false,
      properties: {
        action: { const: 'list' },
        timeout_ms: { type: 'integer', minimum: 1 },
        budget_ms: { type: 'integer', minimum: 1 },
        requested_by: requestedBySchema,
        ...listFilterProperties,
      },
    },
    {
      type: 'object',
      required: [
        'action',
        'timeout_ms',
        'budget_ms',
        'requested_by',
        'element_index',
        'key',
        'modifiers',
      ],
      additionalProperties: false,
      properties: {
        action: { const: 'press' },
        timeout_ms: { type: 'integer', minimum: 1 },
        budget_ms: { type: 'integer', minimum: 1 },
        requested_by: requestedBySchema,
        element_index: { type: 'integer', minimum: 0, maximum: limits.maxElementIndex },
        /** The listing element_index refers to; absent = the device's newest listing. */
        cache_id: cacheIdSchema,
        // Canonical names only (keys.ts): the agent runs what it receives and resolves nothing.
        key: { enum: keyNames },
        modifiers: {
          type: 'array',
          maxItems: limits.maxModifiers,
          items: { enum: modifierNames },
        },
      },
    },
    {
      type: 'object',
      required: ['action', 'timeout_ms', 'budget_ms', 'requested_by', 'element_index'],
      additionalProperties: false,
      properties: {
        action: { const: 'click' },
        ...byIndexCommandProperties,
      },
    },
    {
      type: 'object',
      required: ['action', 'timeout_ms', 'budget_ms', 'requested_by', 'element_index', 'text'],
      additionalProperties: false,
      properties: {
        action: { const: 'type' },
        ...byIndexCommandProperties,
        text: {
          type: 'string',
          minLength: 1,
          maxLength: limits.maxTypeTextLength,
          pattern: typeableTextPattern,
        },
      },
    },
  ],
} as const;

/** Payload of operator.result: the outcome; a failure carries the error code to rethrow. */
export const operatorResultSchema = {
  type: 'object',
  required: ['success', 'message'],
  additionalProperties: false,
  properties: {
    success: { type: 'boolean' },
    message: { type: 'string' },
    code: { enum: errorCodes },
    errors: { type: 'array', items: fieldErrorSchema },
    /** The listing, for a successful list command. */
    listing: listElementsResponseSchema,
  },
} as const;

/** Payload of operator.presence: an agent's heartbeat (online) or goodbye (offline). */
export const operatorPresenceSchema = {
  type: 'object',
  required: ['device_name', 'online', 'ttl_ms'],
  additionalProperties: false,
  properties: {
    device_name: deviceNameSchema,
    online: { type: 'boolean' },
    /** Consider the agent gone when no heartbeat came for this long. */
    ttl_ms: { type: 'integer', minimum: 1 },
  },
} as const;

export type OperatorCommand = FromSchema<typeof operatorCommandSchema>;
export type ListCommand = Extract<OperatorCommand, { action: 'list' }>;
export type PressCommand = Extract<OperatorCommand, { action: 'press' }>;
export type ClickCommand = Extract<OperatorCommand, { action: 'click' }>;
export type TypeCommand = Extract<OperatorCommand, { action: 'type' }>;
export type OperatorResult = FromSchema<typeof operatorResultSchema>;
export type OperatorPresence = FromSchema<typeof operatorPresenceSchema>;

/** operator.command, operator.result and operator.presence (gateway <-> a device's agent). */
export const operatorMessagesContract = {
  validators: {
    operatorCommand: compileValidator<OperatorCommand>(operatorCommandSchema, 'operator command'),
    operatorResult: compileValidator<OperatorResult>(operatorResultSchema, 'operator result'),
    operatorPresence: compileValidator<OperatorPresence>(
      operatorPresenceSchema,
      'operator presence',
    ),
  },
  components: {},
  operations: [],
} satisfies Contract;
