import { limits } from '../limits';
import { deviceNameSchema } from './common';

/**
 * A listing's cache_info.cache_id, sent back with a press so that element_index is read against
 * that listing and no other (the agent makes UUIDs).
 */
export const cacheIdSchema = {
  type: 'string',
  maxLength: limits.maxCacheIdLength,
  pattern: '^[A-Za-z0-9_-]+$',
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
