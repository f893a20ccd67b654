import type { FromSchema } from 'json-schema-to-ts';
import { dateTimeSchema, deviceNameSchema } from '../common.schema';
import type { Contract } from '../contract';
import { limits } from '../limits';
import { compileValidator } from '../validate';
import { refusedReply } from './refused-reply';
import { contentTypes } from '../http/add.route';
import { boundedInteger, searchAnswerSchema, searchOrders } from '../http/search.route';

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
    min_length: boundedInteger(0, limits.maxSearchInteger),
    max_length: boundedInteger(0, limits.maxSearchInteger),
    max_content_length: boundedInteger(1, limits.maxSearchInteger),
    order: { enum: searchOrders },
    limit: boundedInteger(1, limits.maxSearchLimit),
    offset: boundedInteger(0, limits.maxSearchInteger),
    /**
     * How long the worker's store may run the search, from when the worker took the request
     * (searchTimings); past it the store stops it and the reply is `deadline_exceeded`. Absent: no limit.
     */
    budget_ms: boundedInteger(1, limits.maxSearchInteger),
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
    // deadline_exceeded: the store stopped the search at its budget_ms.
    refusedReply(['validation_failed', 'store_unavailable', 'deadline_exceeded', 'failed']),
  ],
} as const;

export type SearchRequest = FromSchema<typeof searchRequestSchema>;
export type SearchReply = FromSchema<typeof searchReplySchema>;

/** search.request and search.reply on `search.rpc` (GET /search, answered by the ingest workers). */
export const searchMessagesContract = {
  validators: {
    searchRequest: compileValidator<SearchRequest>(searchRequestSchema, 'search request'),
    searchReply: compileValidator<SearchReply>(searchReplySchema, 'search reply'),
  },
  components: {},
  operations: [],
} satisfies Contract;
