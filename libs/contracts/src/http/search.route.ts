/** GET /search: its query as documented (search-query.ts parses it) and its answer. */
import type { FromSchema } from 'json-schema-to-ts';
import { dateTimeSchema } from '../common.schema';
import { authErrors, type ApiOperation, type Contract, type QueryParameter } from '../contract';
import { limits } from '../limits';
import { compileValidator } from '../validate';

export const searchOrders = ['newest', 'relevance'] as const;

/** An integer between two bounds, as the search messages and the answer write them. */
export const boundedInteger = (minimum: number, maximum: number) =>
  ({ type: 'integer', minimum, maximum }) as const;

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
        limit: boundedInteger(1, limits.maxSearchLimit),
        offset: boundedInteger(0, limits.maxSearchInteger),
        total: { type: 'integer', minimum: 0 },
      },
    },
  },
} as const;

export type SearchAnswer = FromSchema<typeof searchAnswerSchema>;
export type SearchAnswerItem = FromSchema<typeof searchAnswerItemSchema>;
export type SearchOcrContent = FromSchema<typeof searchOcrContentSchema>;
export type SearchAudioContent = FromSchema<typeof searchAudioContentSchema>;

const searchTime = (bound: string): QueryParameter => ({
  name: `${bound}_time`,
  description:
    `Items at or ${bound === 'start' ? 'after' : 'before'} this time (inclusive): an RFC 3339 ` +
    'date-time with an offset (`T` or a space between date and time) or a time relative to the ' +
    "gateway's clock: `now`, `16h ago`, `2d`, `30m`, `1w` (s, m, h, d, w).",
  schema: { type: 'string' },
  example: bound === 'start' ? '16h ago' : '2026-11-22T10:00:00Z',
});
const searchLength = (name: string, description: string, minimum: number): QueryParameter => ({
  name,
  description,
  schema: { type: 'integer', minimum, maximum: limits.maxSearchInteger },
});

/** GET /search's query (libs/contracts/src/search-query.ts parses it). */
const searchParameters: readonly QueryParameter[] = [
  {
    name: 'q',
    description:
      'Words that must all occur in the text (case and diacritics ignored, no operators); ' +
      'empty or absent: no text filter.',
    schema: { type: 'string', maxLength: limits.maxSearchQueryLength },
    example: 'quarterly report',
  },
  {
    name: 'content_type',
    description:
      '`all` (default), `ocr` (frames), `audio` (transcriptions), or several joined by `+` ' +
      '(`audio+ocr`; a `+` sent unencoded arrives as a space, which is read the same). Older ' +
      "clients' values: `vision` = `ocr`; `ui`, `accessibility`, `input`, `memory` select " +
      'nothing stored here (an empty answer).',
    schema: { type: 'string', default: 'all' },
    example: 'ocr',
  },
  {
    name: 'limit',
    description:
      `Results per page; larger values are answered with ${limits.maxSearchLimit} (pagination.limit says so). ` +
      `A page also ends once its stored items reach ${limits.searchPageMaxBytes / 1024 / 1024} MiB ` +
      '(one item at least): `pagination.limit` then says how many it holds, so paging by ' +
      '`offset += pagination.limit` reads everything.',
    schema: { type: 'integer', minimum: 1, default: limits.searchDefaultLimit },
  },
  {
    name: 'offset',
    description: 'Results to skip; page until `offset >= pagination.total`.',
    schema: { type: 'integer', minimum: 0, maximum: limits.maxSearchInteger, default: 0 },
  },
  searchTime('start'),
  searchTime('end'),
  {
    name: 'app_name',
    description: 'Part of the application name, case-insensitive (transcriptions have none).',
    schema: { type: 'string', maxLength: limits.maxNameLength },
  },
  {
    name: 'window_name',
    description: 'Part of the window title, case-insensitive (transcriptions have none).',
    schema: { type: 'string', maxLength: limits.maxNameLength },
  },
  {
    name: 'device_name',
    description:
      "Only this device's items. A token bound to devices sees only those: naming another is a " +
      '403; leaving it out searches all of its devices.',
    schema: { type: 'string', maxLength: limits.maxDeviceNameBytes },
  },
  searchLength('min_length', 'Only texts of at least this many characters.', 0),
  searchLength('max_length', 'Only texts of at most this many characters.', 0),
  searchLength(
    'max_content_length',
    'Texts longer than this are cut in the middle: the first and last parts joined by `…`, ' +
      'this many characters in all.',
    1,
  ),
  {
    name: 'order',
    description:
      '`newest` (default): newest first. `relevance`: best text match first, then newest.',
    schema: { type: 'string', enum: [...searchOrders], default: 'newest' },
  },
  {
    name: 'timezone',
    description: 'Accepted and ignored: every time is answered in UTC with `Z`.',
    schema: { type: 'string' },
  },
];

export const searchRoute: ApiOperation = {
  method: 'get',
  path: '/search',
  operationId: 'search',
  tag: 'search',
  summary: 'Read back captured text: frames (OCR) and transcriptions',
  description:
    "screenpipe's GET /search, asked of the ingest workers over the broker. Newest first " +
    '(or `order=relevance`); `pagination.total` counts exactly what the filters match, so ' +
    'paging until `offset >= total` reads every item once; an item stored before the request ' +
    'is found by it (no cache). Every field of a result is present, null when not recorded; ' +
    "`frame_id` and `chunk_id` are our item ids, strings (screenpipe's are numbers). Times are " +
    'UTC with `Z`. Unknown parameters are ignored (`include_frames`, `speaker_ids`, ' +
    '`frame_name`, `browser_url`, `focused`...); a known one given twice is a 400. A page ' +
    'larger than one broker message has its longest texts cut in the middle to fit.',
  scope: 'search',
  parameters: searchParameters,
  response: {
    schema: searchAnswerSchema,
    description: 'One page of results and the total the filters match.',
    example: {
      data: [
        {
          type: 'OCR',
          content: {
            frame_id: '2t-3q2V8m0k1nXhZ5o4QpYfWcJr9aL6sTgE7uDbKxIyHvA',
            text: 'Quarterly report\nRevenue up 12%',
            timestamp: '2026-11-22T10:00:00.123Z',
            file_path: '/data/frames/2026-11-22/10-00-00.mp4',
            offset_index: null,
            app_name: 'Chromium',
            window_name: 'Docs - quarterly report',
            tags: ['work'],
            frame: null,
            frame_name: null,
            browser_url: null,
            focused: true,
            device_name: 'MacBook Pro',
          },
        },
        {
          type: 'Audio',
          content: {
            chunk_id: '2r-Hk3bV9x0Qm2LpZ7yWcT4nR8aJ5sFgE1uDoKiYtXvB',
            transcription: 'the quarterly report is due friday',
            timestamp: '2026-11-22T09:58:30.000Z',
            file_path: null,
            offset_index: null,
            tags: [],
            device_name: 'MacBook Pro',
            device_type: null,
            speaker: null,
            start_time: null,
            end_time: null,
          },
        },
      ],
      pagination: { limit: 20, offset: 0, total: 2 },
    },
  },
  errors: [...authErrors, 400, 502, 503],
};

export const searchContract = {
  validators: { searchAnswer: compileValidator<SearchAnswer>(searchAnswerSchema, 'search answer') },
  components: {
    SearchAnswer: searchAnswerSchema,
    SearchAnswerItem: searchAnswerItemSchema,
    SearchOcrContent: searchOcrContentSchema,
    SearchAudioContent: searchAudioContentSchema,
  },
  operations: [searchRoute],
} satisfies Contract;
