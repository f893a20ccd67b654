/**
 * The operator's four routes: list a window's elements, then press a key on, click or type into
 * one of them by its index in that listing.
 */
import type { FromSchema } from 'json-schema-to-ts';
import { dateTimeSchema, deviceNameSchema } from '../common.schema';
import { authErrors, bodyErrors, type ApiOperation, type Contract } from '../contract';
import { limits } from '../limits';
import { compileValidator } from '../validate';
import { operationResultSchema } from './common.contract';

/**
 * A listing's cache_info.cache_id, sent back with a press so that element_index is read against
 * that listing and no other (the agent makes UUIDs).
 */
export const cacheIdSchema = {
  type: 'string',
  maxLength: limits.maxCacheIdLength,
  pattern: '^[A-Za-z0-9_-]+$',
} as const;

const optionalBoolean = { type: ['boolean', 'null'] } as const;
export const interactabilities = ['definite', 'sometimes', 'none'] as const;
/**
 * How sure the agent is that focusing the element and pressing a key does something useful:
 * 'definite' for controls that take input (buttons, text fields, ...), 'sometimes' for other
 * focusable elements (documents, groups, panes), 'none' for elements that cannot take focus.
 */
export type Interactability = (typeof interactabilities)[number];

/** The listing filters screenpipe's clients send; everything but app_name is optional (or null). */
export const listFilterProperties = {
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
 * Both request shapes real clients send: the spec's {element_index, key, modifiers} and
 * screenpipe SDK's {element_index, key_combo}. Key names are checked by the x-key-name keyword
 * against the one table of names (keys.ts, keyNameRules), so the 400 can list the allowed names.
 */
export const pressKeyRequestSchema = {
  type: 'object',
  required: ['element_index'],
  additionalProperties: false,
  properties: {
    element_index: { type: 'integer', minimum: 0, maximum: limits.maxElementIndex },
    /** The listing element_index refers to (or null/absent: the newest); another listing: 409. */
    cache_id: { ...cacheIdSchema, type: ['string', 'null'] },
    key: { type: 'string', minLength: 1, maxLength: limits.maxKeyLength, 'x-key-name': 'key' },
    modifiers: {
      type: ['array', 'null'],
      maxItems: limits.maxModifiers,
      items: { type: 'string', maxLength: limits.maxKeyLength, 'x-key-name': 'modifier' },
    },
    key_combo: {
      type: 'string',
      minLength: 1,
      maxLength: limits.maxKeyLength,
      'x-key-name': 'combo',
    },
    device_name: deviceNameSchema,
  },
  // With no key_combo the spec's shape applies, whose key is required.
  if: { not: { required: ['key_combo'] } },
  then: { required: ['key'] },
  else: {
    not: { anyOf: [{ required: ['key'] }, { required: ['modifiers'] }] },
    description: 'send either key (with modifiers) or key_combo, not both',
  },
} as const;

/** The index of a listed element and the listing it was read from, as every by-index request has. */
const byIndexProperties = {
  element_index: { type: 'integer', minimum: 0, maximum: limits.maxElementIndex },
  /** The listing element_index refers to (or null/absent: the newest); another listing: 409. */
  cache_id: { ...cacheIdSchema, type: ['string', 'null'] },
  device_name: deviceNameSchema,
} as const;

/** POST /experimental/operator/click-by-index: screenpipe SDK's {element_index}, and ours. */
export const clickByIndexRequestSchema = {
  type: 'object',
  required: ['element_index'],
  additionalProperties: false,
  properties: byIndexProperties,
} as const;

/**
 * Characters the agent can type: anything but control characters, of which only a line break
 * (Enter) and a tab (Tab) are keys. Checked again by the agent before it types.
 */
export const typeableTextPattern = '^[^\\u0000-\\u0008\\u000B-\\u001F\\u007F-\\u009F]*$';

/** POST /experimental/operator/type-by-index: screenpipe SDK's {element_index, text}, and ours. */
export const typeByIndexRequestSchema = {
  type: 'object',
  required: ['element_index', 'text'],
  additionalProperties: false,
  properties: {
    ...byIndexProperties,
    text: {
      type: 'string',
      minLength: 1,
      maxLength: limits.maxTypeTextLength,
      pattern: typeableTextPattern,
    },
  },
} as const;

export type ListElementsRequest = FromSchema<typeof listElementsRequestSchema>;
export type ListElementsResponse = FromSchema<typeof listElementsResponseSchema>;
export type ListedElement = FromSchema<typeof listedElementSchema>;
export type PressKeyRequest = FromSchema<typeof pressKeyRequestSchema>;
export type ClickByIndexRequest = FromSchema<typeof clickByIndexRequestSchema>;
export type TypeByIndexRequest = FromSchema<typeof typeByIndexRequestSchema>;

const operatorErrors = [...authErrors, ...bodyErrors, 404, 503, 504] as const;

export const listElementsRoute: ApiOperation = {
  method: 'post',
  path: '/experimental/operator/list-interactable-elements',
  operationId: 'listInteractableElements',
  tag: 'operator',
  summary: "List the elements of an application's window on a device",
  description:
    "Relayed to the device's operator agent; the listing becomes the device's snapshot " +
    '(`cache_info.cache_id`) that key presses refer to. `device_name` may be left out when ' +
    'exactly one agent is connected (400 when several are). Never served without a token.',
  scope: 'operator',
  request: {
    schema: listElementsRequestSchema,
    required: true,
    examples: {
      chromium: {
        summary: 'Interactable elements of a Chromium window',
        value: {
          app_name: 'Chromium',
          window_name: 'screenfleet',
          interactable_only: true,
          max_elements: 50,
          device_name: 'MacBook Pro',
        },
      },
    },
  },
  response: { schema: listElementsResponseSchema, description: 'The listing and its snapshot.' },
  errors: operatorErrors,
};

export const pressKeyRoute: ApiOperation = {
  method: 'post',
  path: '/experimental/operator/press-key-by-index',
  operationId: 'pressKeyByIndex',
  tag: 'operator',
  summary: 'Press a key (with modifiers) on a listed element',
  description:
    "Sends `key` with `modifiers` (the spec's shape) or `key_combo` (screenpipe SDK's) to " +
    'the element `element_index` of the listing `cache_id` (or the newest one). 409 when that ' +
    'listing is not the current one or the element changed: nothing was pressed. 500 ' +
    '`outcome_unknown`: the press may have run, check before sending it again. Never served ' +
    'without a token.',
  scope: 'operator',
  request: {
    schema: pressKeyRequestSchema,
    required: true,
    examples: {
      keyAndModifiers: {
        summary: "The spec's shape",
        value: {
          element_index: 3,
          cache_id: '7b0c2c1e-9f1a-4c55-8d7e-2f4b3a1d9e10',
          key: 'a',
          modifiers: ['ctrl'],
          device_name: 'MacBook Pro',
        },
      },
      keyCombo: {
        summary: "screenpipe SDK's shape",
        value: { element_index: 0, key_combo: 'cmd+a' },
      },
    },
  },
  response: { schema: operationResultSchema, description: 'The key was pressed.' },
  errors: [...operatorErrors, 409],
};

export const clickByIndexRoute: ApiOperation = {
  method: 'post',
  path: '/experimental/operator/click-by-index',
  operationId: 'clickByIndex',
  tag: 'operator',
  summary: 'Click a listed element at its centre',
  description:
    'One left click at the centre of the element `element_index` of the listing `cache_id` (or ' +
    'the newest one), after it was read again. 409 when that listing is not the current one, ' +
    'the element changed or is gone, its centre is not on the screen, or something else (a ' +
    'dialog, a banner) is there: nothing was clicked. 500 `outcome_unknown`: the click may ' +
    "have run, check before sending it again. screenpipe SDK's `clickByIndex` sends " +
    '`{element_index}` alone. Never served without a token.',
  scope: 'operator',
  request: {
    schema: clickByIndexRequestSchema,
    required: true,
    examples: {
      ours: {
        summary: 'With the listing and the device',
        value: {
          element_index: 12,
          cache_id: '7b0c2c1e-9f1a-4c55-8d7e-2f4b3a1d9e10',
          device_name: 'MacBook Pro',
        },
      },
      sdk: { summary: "screenpipe SDK's shape", value: { element_index: 12 } },
    },
  },
  response: {
    schema: operationResultSchema,
    description: 'The element was clicked.',
    example: { success: true, message: "clicked element 12 (push button 'Submit')" },
  },
  errors: [...operatorErrors, 409],
};

export const typeByIndexRoute: ApiOperation = {
  method: 'post',
  path: '/experimental/operator/type-by-index',
  operationId: 'typeByIndex',
  tag: 'operator',
  summary: 'Type text into a listed element',
  description:
    `Focuses the element \`element_index\` of the listing \`cache_id\` (or the newest one) after it ` +
    `was read again, types \`text\` as key presses (1-${limits.maxTypeTextLength} characters, any ` +
    'Unicode character; of control characters only a line break and a tab, and those not into ' +
    'a single-line field), then reads the value back: it must be the value before with the ' +
    'text put in at the caret (replacing a selection), else 500 `operation_failed` saying what ' +
    'the element shows (a page that filters or reformats input). 409 when the listing is not ' +
    'the current one, the element changed, is gone, or takes no text: nothing was typed. ' +
    "screenpipe SDK's `typeByIndex` sends `{element_index, text}`. Never served without a token.",
  scope: 'operator',
  request: {
    schema: typeByIndexRequestSchema,
    required: true,
    examples: {
      ours: {
        summary: 'With the listing and the device',
        value: {
          element_index: 3,
          text: 'Zoë Saldaña',
          cache_id: '7b0c2c1e-9f1a-4c55-8d7e-2f4b3a1d9e10',
          device_name: 'MacBook Pro',
        },
      },
      sdk: {
        summary: "screenpipe SDK's shape",
        value: { element_index: 3, text: 'hello world' },
      },
    },
  },
  response: {
    schema: operationResultSchema,
    description: 'The text was typed and the element shows it.',
    example: { success: true, message: "typed 11 characters into element 3 (entry 'Name')" },
  },
  errors: [...operatorErrors, 409],
};

export const operatorContract = {
  validators: {
    listElementsRequest: compileValidator<ListElementsRequest>(
      listElementsRequestSchema,
      'list-elements request',
    ),
    listElementsResponse: compileValidator<ListElementsResponse>(
      listElementsResponseSchema,
      'list-elements response',
    ),
    pressKeyRequest: compileValidator<PressKeyRequest>(pressKeyRequestSchema, 'press-key request'),
    clickByIndexRequest: compileValidator<ClickByIndexRequest>(
      clickByIndexRequestSchema,
      'click-by-index request',
    ),
    typeByIndexRequest: compileValidator<TypeByIndexRequest>(
      typeByIndexRequestSchema,
      'type-by-index request',
    ),
  },
  components: {
    PressKeyRequest: pressKeyRequestSchema,
    ClickByIndexRequest: clickByIndexRequestSchema,
    TypeByIndexRequest: typeByIndexRequestSchema,
    ListElementsRequest: listElementsRequestSchema,
    ListElementsResponse: listElementsResponseSchema,
    ListedElement: listedElementSchema,
    CacheId: cacheIdSchema,
  },
  operations: [listElementsRoute, pressKeyRoute, clickByIndexRoute, typeByIndexRoute],
} satisfies Contract;
