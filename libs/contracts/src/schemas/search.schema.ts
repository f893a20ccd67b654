import { limits } from '../limits';
import { contentTypes } from './add-request.schema';
import { dateTimeSchema, deviceNameSchema } from './common';

export const searchOrders = ['newest', 'relevance'] as const;

const count = (minimum: number, maximum: number) =>
  ({ type: 'integer', minimum, maximum }) as const;
const name = { type: 'string', minLength: 1, maxLength: limits.maxNameLength } as const;

/**
 * Payload of search.request on `search.rpc`: GET /search as the gateway resolved it (relative
 * times against its clock, the token's devices applied), so the ingest worker decides nothing
 * about who may see what. Absent filters do not filter.
 */
export const searchRequestSchema = {
  type: 'object',
  required: ['q', 'content_types', 'order', 'limit', 'offset'],
  additionalProperties: false,
  properties: {
    /** The words as the client sent them ('' = no text filter); the worker splits them. */
    q: { type: 'string', maxLength: limits.maxSearchQueryLength },
    content_types: {
      type: 'array',
      minItems: 1,
      maxItems: contentTypes.length,
      uniqueItems: true,
      items: { enum: contentTypes },
    },
    /** Inclusive bounds on the item's timestamp. */
    from: dateTimeSchema,
    to: dateTimeSchema,
    /** Only these devices' items; absent = every device. */
    devices: { type: 'array', minItems: 1, items: deviceNameSchema },
    app_name: name,
    window_name: name,
    min_length: count(0, limits.maxSearchInteger),
    max_length: count(0, limits.maxSearchInteger),
    max_content_length: count(1, limits.maxSearchInteger),
    order: { enum: searchOrders },
    limit: count(1, limits.maxSearchLimit),
    offset: count(0, limits.maxSearchInteger),
    /**
     * How long the worker's store may run the search, from when the worker took the request
     * (searchTimings); past it the store stops it and the reply is `deadline_exceeded`. Absent: no limit.
     */
    budget_ms: count(1, limits.maxSearchInteger),
  },
} as const;

const nullableString = { type: ['string', 'null'] } as const;
/** A field screenpipe has and we never record: always null, present so clients find it. */
const alwaysNull = (what: string) =>
  ({ type: 'null', description: `${what}: always null` }) as const;
const tags = { type: 'array', items: { type: 'string' } } as const;

/** A frame's text in GET /search (screenpipe's `OCR` content). */
export const searchOcrContentSchema = {
  type: 'object',
  additionalProperties: false,
  required: [
    'frame_id',
    'text',
    'timestamp',
    'file_path',
    'offset_index',
    'app_name',
    'window_name',
    'tags',
    'frame',
    'frame_name',
    'browser_url',
    'focused',
    'device_name',
  ],
  properties: {
    /** Our item id, a string (screenpipe sends a number): pass it back as it is. */
    frame_id: { type: 'string' },
    /** The item's OCR texts, joined by a line break. */
    text: { type: 'string' },
    /** ISO 8601 UTC with `Z`. */
    timestamp: dateTimeSchema,
    file_path: { type: 'string' },
    offset_index: alwaysNull('the frame index in the video file'),
    app_name: nullableString,
    window_name: nullableString,
    tags,
    frame: alwaysNull('the frame image (include_frames is ignored)'),
    frame_name: alwaysNull('the frame name'),
    browser_url: alwaysNull('the browser URL'),
    /** True when an OCR result was marked focused, false when all were marked not, else null. */
    focused: { type: ['boolean', 'null'] },
    device_name: { type: 'string' },
  },
} as const;

/** A transcription in GET /search (screenpipe's `Audio` content). */
export const searchAudioContentSchema = {
  type: 'object',
  additionalProperties: false,
  required: [
    'chunk_id',
    'transcription',
    'timestamp',
    'file_path',
    'offset_index',
    'tags',
    'device_name',
    'device_type',
    'speaker',
    'start_time',
    'end_time',
  ],
  properties: {
    /** Our item id, a string (screenpipe sends a number). */
    chunk_id: { type: 'string' },
    transcription: { type: 'string' },
    timestamp: dateTimeSchema,
    /** Transcriptions are sent without a file: null. */
    file_path: nullableString,
    offset_index: alwaysNull('the offset in the audio file'),
    tags,
    device_name: { type: 'string' },
    device_type: alwaysNull('input or output device'),
    speaker: alwaysNull('the speaker'),
    start_time: alwaysNull('seconds into the audio chunk'),
    end_time: alwaysNull('seconds into the audio chunk'),
  },
} as const;

export const searchAnswerItemSchema = {
  type: 'object',
  discriminator: { propertyName: 'type' },
  required: ['type', 'content'],
  oneOf: [
    {
      type: 'object',
      required: ['type', 'content'],
      additionalProperties: false,
      properties: { type: { const: 'OCR' }, content: searchOcrContentSchema },
    },
    {
      type: 'object',
      required: ['type', 'content'],
      additionalProperties: false,
      properties: { type: { const: 'Audio' }, content: searchAudioContentSchema },
    },
  ],
} as const;

/**
 * GET /search's answer, screenpipe's shape: one page of results and `total`, the number of
 * items the same filters match (paging until `offset >= total` reads each exactly once).
 */
export const searchAnswerSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['data', 'pagination'],
  properties: {
    data: { type: 'array', items: searchAnswerItemSchema },
    pagination: {
      type: 'object',
      additionalProperties: false,
      required: ['limit', 'offset', 'total'],
      properties: {
        limit: count(1, limits.maxSearchLimit),
        offset: count(0, limits.maxSearchInteger),
        total: { type: 'integer', minimum: 0 },
      },
    },
  },
} as const;

/** Payload of search.reply: the answer, or why the worker could not give one. */
export const searchReplySchema = {
  type: 'object',
  discriminator: { propertyName: 'outcome' },
  required: ['outcome'],
  oneOf: [
    {
      type: 'object',
      required: ['outcome', 'answer'],
      additionalProperties: false,
      properties: { outcome: { const: 'ok' }, answer: searchAnswerSchema },
    },
    {
      type: 'object',
      required: ['outcome', 'code', 'message'],
      additionalProperties: false,
      properties: {
        outcome: { const: 'refused' },
        /** deadline_exceeded: the store stopped the search at its budget_ms. */
        code: {
          enum: ['validation_failed', 'store_unavailable', 'deadline_exceeded', 'failed'],
        },
        message: { type: 'string' },
      },
    },
  ],
} as const;
