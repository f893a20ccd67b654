/** GET /devices and GET /devices/{name}: the fleet, each device's capture, agent and archive. */
import type { FromSchema } from 'json-schema-to-ts';
import { nullableDateTimeSchema } from '../common.schema';
import { authErrors, type ApiOperation, type Contract } from '../contract';
import { compileValidator } from '../validate';

/** capture_status: ok (sending), stalled (was sending, silent for CAPTURE_STALL_AFTER), idle. */
export const captureStatuses = ['ok', 'stalled', 'idle'] as const;
/** agent.status, from the operator agents' heartbeats (docs/adr/0003). */
export const agentStatuses = ['online', 'unresponsive', 'offline'] as const;
/** GET /devices' sort keys. */
export const deviceSortKeys = ['device_name', 'last_item_time'] as const;
/** GET /devices' page size: the default, and the most one page holds (a larger `limit` is capped). */
export const devicesDefaultLimit = 50;
export const devicesMaxLimit = 1000;

const count = { type: 'integer', minimum: 0 } as const;
const start = { type: 'string', format: 'date-time-offset' } as const;
/** Items stored per hour or day, from `start` (a device's timeline). */
export const timelineBucketSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['start', 'items'],
  properties: { start, items: count },
} as const;

/** What the store's counters say about one content type of one device (wire and answer). */
const contentTypeCaptureSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['items_stored', 'last_item_time', 'items_last_hour', 'items_last_24h'],
  properties: {
    items_stored: count,
    last_item_time: nullableDateTimeSchema,
    items_last_hour: count,
    items_last_24h: count,
  },
} as const;

/** Keyed by content type (add.route.ts's contentTypes); a type never sent is absent. */
const byContentType = {
  frames: contentTypeCaptureSchema,
  transcription: contentTypeCaptureSchema,
} as const;

/** GET /devices' entry for one device (the console's fleet view is built on this shape). */
export const deviceSummarySchema = {
  type: 'object',
  additionalProperties: false,
  required: ['device_name', 'capture_status', 'capture', 'agent', 'archive'],
  properties: {
    device_name: { type: 'string' },
    capture_status: { enum: captureStatuses },
    capture: {
      type: 'object',
      additionalProperties: false,
      required: [
        'first_item_time',
        'last_item_time',
        'items_stored',
        'items_last_hour',
        'items_last_24h',
        'by_content_type',
      ],
      properties: {
        first_item_time: nullableDateTimeSchema,
        last_item_time: nullableDateTimeSchema,
        items_stored: count,
        items_last_hour: count,
        items_last_24h: count,
        by_content_type: {
          type: 'object',
          additionalProperties: false,
          properties: byContentType,
        },
      },
    },
    agent: {
      type: 'object',
      additionalProperties: false,
      required: ['status', 'last_heartbeat_time'],
      properties: {
        status: { enum: agentStatuses },
        last_heartbeat_time: nullableDateTimeSchema,
      },
    },
    archive: {
      type: 'object',
      additionalProperties: false,
      required: ['items_archived', 'last_archived_item_time'],
      properties: { items_archived: count, last_archived_item_time: nullableDateTimeSchema },
    },
  },
} as const;

/** GET /devices: a page of devices and the total the filter matches. */
export const devicesAnswerSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['data', 'pagination'],
  properties: {
    data: { type: 'array', items: deviceSummarySchema },
    pagination: {
      type: 'object',
      additionalProperties: false,
      required: ['limit', 'offset', 'total'],
      properties: { limit: count, offset: count, total: count },
    },
  },
} as const;

/** GET /devices/{name}: the summary and its timeline (24 hours, 30 days, oldest first). */
export const deviceDetailSchema = {
  ...deviceSummarySchema,
  required: [...deviceSummarySchema.required, 'timeline'],
  properties: {
    ...deviceSummarySchema.properties,
    timeline: {
      type: 'object',
      additionalProperties: false,
      required: ['hourly', 'daily'],
      properties: {
        hourly: { type: 'array', minItems: 24, maxItems: 24, items: timelineBucketSchema },
        daily: { type: 'array', minItems: 30, maxItems: 30, items: timelineBucketSchema },
      },
    },
  },
} as const;

export type DeviceSummary = FromSchema<typeof deviceSummarySchema>;
export type DeviceDetail = FromSchema<typeof deviceDetailSchema>;
export type DevicesAnswer = FromSchema<typeof devicesAnswerSchema>;
export type CaptureStatus = (typeof captureStatuses)[number];
export type AgentStatus = (typeof agentStatuses)[number];

export const devicesRoute: ApiOperation = {
  method: 'get',
  path: '/devices',
  operationId: 'listDevices',
  tag: 'fleet',
  summary: 'The fleet: every device seen, its capture, agent and archive state',
  description:
    'Every device the service has stored content from or whose operator agent announced ' +
    'itself, from per-device counters the ingest workers keep as they store (never counted on ' +
    'request). `capture_status`: `ok` (a batch received within CAPTURE_STALL_AFTER, default 5 ' +
    'min), `stalled` (it was sending, batches at two moments at least, and nothing came for ' +
    'longer), `idle` (never regular: one batch, or nothing). `agent.status`: `online` (a ' +
    'heartbeat within 3 intervals), `unresponsive` (silent since, up to 5 min more), `offline` ' +
    '(a goodbye, longer silence, or not heard by this gateway). `items_stored` counts items in ' +
    'the store now (archived ones move to `archive.items_archived`); the last hour and 24 h are ' +
    'summed from hourly buckets, the oldest pro rata. A token bound to devices sees only its ' +
    'own. Times are UTC with `Z`.',
  scope: 'search',
  parameters: [
    {
      name: 'limit',
      description: `Devices per page (default ${devicesDefaultLimit}); more than ${devicesMaxLimit} is capped (pagination.limit says so).`,
      schema: { type: 'integer', minimum: 1, default: devicesDefaultLimit },
    },
    {
      name: 'offset',
      description: 'Devices to skip.',
      schema: { type: 'integer', minimum: 0, default: 0 },
    },
    {
      name: 'status',
      description:
        'Only devices with this capture_status (ok, stalled, idle) or agent.status (online, unresponsive, offline).',
      schema: { type: 'string', enum: [...captureStatuses, ...agentStatuses] },
    },
    {
      name: 'sort',
      description:
        '`device_name`: A to Z (default); `last_item_time`: newest first, devices with none last.',
      schema: { type: 'string', enum: [...deviceSortKeys], default: 'device_name' },
    },
  ],
  response: {
    schema: devicesAnswerSchema,
    description: 'One page of devices and how many match.',
    example: {
      data: [
        {
          device_name: 'MacBook Pro',
          capture_status: 'ok',
          capture: {
            first_item_time: '2026-11-01T08:00:00.000Z',
            last_item_time: '2026-11-22T10:00:00.123Z',
            items_stored: 51234,
            items_last_hour: 710,
            items_last_24h: 9800,
            by_content_type: {
              frames: {
                items_stored: 50000,
                last_item_time: '2026-11-22T10:00:00.123Z',
                items_last_hour: 700,
                items_last_24h: 9600,
              },
              transcription: {
                items_stored: 1234,
                last_item_time: '2026-11-22T09:58:10.000Z',
                items_last_hour: 10,
                items_last_24h: 200,
              },
            },
          },
          agent: { status: 'online', last_heartbeat_time: '2026-11-22T10:00:01.000Z' },
          archive: {
            items_archived: 120000,
            last_archived_item_time: '2026-10-23T00:00:00.000Z',
          },
        },
      ],
      pagination: { limit: 50, offset: 0, total: 1 },
    },
  },
  errors: [400, ...authErrors, 502, 503],
};

export const deviceRoute: ApiOperation = {
  method: 'get',
  path: '/devices/{name}',
  operationId: 'getDevice',
  tag: 'fleet',
  summary: "One device's state and its timeline (items per hour for 24 h, per day for 30 days)",
  description:
    'The same as its entry in GET /devices, plus `timeline`: `hourly` (the last 24 UTC hours) ' +
    'and `daily` (the last 30 UTC days), oldest first, every bucket present (0 when empty), ' +
    'counting items stored by their timestamps. 404 for a device the service does not know, ' +
    'and for one the token may not see (the same answer).',
  scope: 'search',
  pathParameters: [
    {
      name: 'name',
      description: 'The device name, URL-encoded.',
      schema: { $ref: '#/components/schemas/DeviceName' },
    },
  ],
  response: { schema: deviceDetailSchema, description: 'The device and its timeline.' },
  errors: [...authErrors, 404, 502, 503],
};

export const devicesContract = {
  validators: {
    devicesAnswer: compileValidator<DevicesAnswer>(devicesAnswerSchema, 'devices answer'),
    deviceDetail: compileValidator<DeviceDetail>(deviceDetailSchema, 'device detail'),
  },
  components: {
    DevicesAnswer: devicesAnswerSchema,
    DeviceSummary: deviceSummarySchema,
    DeviceDetail: deviceDetailSchema,
  },
  operations: [devicesRoute, deviceRoute],
} satisfies Contract;
