import { errorCodes } from '../errors';
import { limits } from '../limits';
import { keyNames, modifierNames } from '../keys';
import { dateTimeSchema, deviceNameSchema } from './common';
import { cacheIdSchema, typeableTextPattern } from './press-key.schema';
import { fieldErrorSchema } from './results.schema';

const optionalBoolean = { type: ['boolean', 'null'] } as const;
export const interactabilities = ['definite', 'sometimes', 'none'] as const;
/**
 * How sure the agent is that focusing the element and pressing a key does something useful:
 * 'definite' for controls that take input (buttons, text fields, ...), 'sometimes' for other
 * focusable elements (documents, groups, panes), 'none' for elements that cannot take focus.
 */
export type Interactability = (typeof interactabilities)[number];

/** The listing filters screenpipe's clients send; everything but app_name is optional (or null). */
const listFilterProperties = {
  app_name: { type: 'string', minLength: 1, maxLength: limits.maxNameLength },
  window_name: { type: ['string', 'null'], maxLength: limits.maxNameLength },
  with_text_only: optionalBoolean,
  interactable_only: optionalBoolean,
  include_sometimes_interactable: optionalBoolean,
  max_elements: { type: ['integer', 'null'], minimum: 1, maximum: limits.maxListedElements },
} as const;

/**
 * POST /experimental/operator/list-interactable-elements as screenpipe's clients send it.
 * use_background_apps and activate_app are accepted and have no effect (one desktop session).
 */
export const listElementsRequestSchema = {
  type: 'object',
  required: ['app_name'],
  additionalProperties: false,
  properties: {
    ...listFilterProperties,
    use_background_apps: optionalBoolean,
    activate_app: optionalBoolean,
    device_name: deviceNameSchema,
  },
} as const;

const count = { type: 'integer', minimum: 0 } as const;

export const listedElementSchema = {
  type: 'object',
  required: ['index', 'role', 'text', 'interactability', 'position', 'size'],
  additionalProperties: false,
  properties: {
    /** Index in the snapshot's full list: filters never renumber. */
    index: count,
    role: { type: 'string' },
    text: { type: 'string' },
    interactability: { enum: interactabilities },
    position: {
      type: 'object',
      required: ['x', 'y'],
      additionalProperties: false,
      properties: { x: { type: 'number' }, y: { type: 'number' } },
    },
    size: {
      type: 'object',
      required: ['width', 'height'],
      additionalProperties: false,
      properties: { width: { type: 'number' }, height: { type: 'number' } },
    },
  },
} as const;

/** The answer: elements (filtered), stats and cache_info over the whole snapshot. */
export const listElementsResponseSchema = {
  type: 'object',
  required: ['elements', 'stats', 'cache_info'],
  additionalProperties: false,
  properties: {
    elements: { type: 'array', items: listedElementSchema },
    stats: {
      type: 'object',
      required: [
        'total',
        'definitely_interactable',
        'sometimes_interactable',
        'non_interactable',
        'by_role',
      ],
      additionalProperties: false,
      properties: {
        total: count,
        definitely_interactable: count,
        sometimes_interactable: count,
        non_interactable: count,
        by_role: { type: 'object', additionalProperties: count },
      },
    },
    cache_info: {
      type: 'object',
      required: ['cache_id', 'timestamp', 'expires_at', 'element_count', 'ttl_seconds'],
      additionalProperties: false,
      properties: {
        cache_id: cacheIdSchema,
        timestamp: dateTimeSchema,
        expires_at: dateTimeSchema,
        element_count: count,
        ttl_seconds: { type: 'number', minimum: 0 },
      },
    },
  },
} as const;

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
