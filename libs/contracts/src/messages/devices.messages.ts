import type { FromSchema } from 'json-schema-to-ts';
import { deviceNameSchema } from '../common.schema';
import type { Contract } from '../contract';
import { compileValidator } from '../validate';
import { refusedReply } from './refused-reply';
import { timelineBucketSchema } from '../http/devices.routes';

const count = { type: 'integer', minimum: 0 } as const;

/**
 * Payload of devices.request on `search.rpc` (the ingest workers' read queue: they own the
 * content store): the counters of these devices (absent: all), and with `timeline` each one's
 * hourly and daily timeline. The gateway decides which devices a token may see.
 */
export const devicesRequestSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    devices: { type: 'array', items: deviceNameSchema },
    timeline: { type: 'boolean' },
    /**
     * true: the devices' listing rows (devices.reply `listed`), not their records: GET /devices
     * sorts, filters and pages every device on them, then asks the records of its page only;
     * GET /health judges on them.
     */
    listing: { type: 'boolean' },
    /**
     * true: only the newest item time of each content type over these devices (devices.reply
     * `newest`), what GET /health judges: one indexed read whatever the fleet's size. Wins over
     * `listing`. The gateway sends it with `listing: true`: a worker that predates it drops the
     * unknown field (as every reader drops unknown fields) and answers the listing, which the
     * gateway folds to the same times, so gateways and workers may be upgraded in any order.
     */
    newest: { type: 'boolean' },
    /**
     * With `newest`: how long the worker's store may take (searchTimings' budget of the
     * gateway's wait); past it the read is stopped and the reply is `deadline_exceeded`, so no
     * read outlives the gateway's wait for it. Dropped by a worker that predates it.
     */
    budget_ms: { type: 'integer', minimum: 1 },
  },
} as const;

/** A time in the devices messages: ms since the epoch (UTC), or null. Compact for 1,000s of devices. */
const ms = { type: ['integer', 'null'] } as const;
const wireContentType = {
  type: 'array',
  minItems: 4,
  maxItems: 4,
  items: [count, ms, count, count],
  additionalItems: false,
} as const;

/**
 * One device as an ingest worker reports it, before the gateway's statuses: its counters in a
 * compact form (a reply for every device of a fleet is validated and parsed on each GET
 * /devices). Per content type `[items_stored, last_item_ms, items_last_hour, items_last_24h]`.
 */
export const deviceCaptureRecordSchema = {
  type: 'object',
  additionalProperties: false,
  required: [
    'device_name',
    'by_content_type',
    'first_item_ms',
    'first_received_ms',
    'last_received_ms',
    'items_archived',
    'last_archived_item_ms',
  ],
  properties: {
    device_name: { type: 'string', minLength: 1 },
    first_item_ms: ms,
    /** When the gateway received the device's first and latest batch that stored something. */
    first_received_ms: ms,
    last_received_ms: ms,
    by_content_type: {
      type: 'object',
      additionalProperties: false,
      properties: { frames: wireContentType, transcription: wireContentType },
    },
    items_archived: count,
    last_archived_item_ms: ms,
    timeline: {
      type: 'object',
      additionalProperties: false,
      required: ['hourly', 'daily'],
      properties: {
        hourly: { type: 'array', items: timelineBucketSchema },
        daily: { type: 'array', items: timelineBucketSchema },
      },
    },
  },
} as const;

/**
 * One device in a listing: what GET /devices sorts and filters on and GET /health judges, and
 * no counts, as a tuple (every device of a fleet is listed on each such request):
 * `[device_name, first_received_ms, last_received_ms, last_frame_ms, last_transcription_ms]`,
 * the last two the newest item time of that content type.
 */
export const deviceListingRowSchema = {
  type: 'array',
  minItems: 5,
  maxItems: 5,
  items: [{ type: 'string', minLength: 1 }, ms, ms, ms, ms],
  additionalItems: false,
} as const;

/**
 * The newest item time of each content type (ms since the epoch, UTC; null: none stored) over
 * the devices asked about: devices.reply `newest`, GET /health's summary.
 */
export const newestItemTimesSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['frames', 'transcription'],
  properties: { frames: ms, transcription: ms },
} as const;

/**
 * Payload of devices.reply: the records (sorted by device name), with `listing: true` asked the
 * listing rows (`listed`, sorted by device name), with `newest: true` the newest item time per
 * content type (`newest`), or why not.
 */
export const devicesReplySchema = {
  type: 'object',
  discriminator: { propertyName: 'outcome' },
  required: ['outcome'],
  oneOf: [
    {
      type: 'object',
      required: ['outcome', 'devices'],
      additionalProperties: false,
      properties: {
        outcome: { const: 'ok' },
        devices: { type: 'array', items: deviceCaptureRecordSchema },
      },
    },
    {
      type: 'object',
      required: ['outcome', 'listing'],
      additionalProperties: false,
      properties: {
        outcome: { const: 'listed' },
        listing: { type: 'array', items: deviceListingRowSchema },
      },
    },
    {
      type: 'object',
      required: ['outcome', 'newest'],
      additionalProperties: false,
      properties: {
        outcome: { const: 'newest' },
        newest: newestItemTimesSchema,
      },
    },
    // deadline_exceeded: only for a request with budget_ms (newer gateways).
    refusedReply(['validation_failed', 'store_unavailable', 'deadline_exceeded', 'failed']),
  ],
} as const;

export type DevicesRequest = FromSchema<typeof devicesRequestSchema>;
export type DevicesReply = FromSchema<typeof devicesReplySchema>;
export type DeviceCaptureRecord = FromSchema<typeof deviceCaptureRecordSchema>;
export type DeviceListingRow = FromSchema<typeof deviceListingRowSchema>;
export type NewestItemTimes = FromSchema<typeof newestItemTimesSchema>;

/** devices.request and devices.reply on `search.rpc` (GET /devices, /devices/{name}, /health). */
export const devicesMessagesContract = {
  validators: {
    devicesRequest: compileValidator<DevicesRequest>(devicesRequestSchema, 'devices request'),
    devicesReply: compileValidator<DevicesReply>(devicesReplySchema, 'devices reply'),
  },
  components: {},
  operations: [],
} satisfies Contract;
