/** Deleting what was captured: a time range, or a device's all. */
import type { FromSchema } from 'json-schema-to-ts';
import { dateTimeSchema, deviceNameSchema } from '../common.schema';
import { archiveErrors, bodyErrors, type ApiOperation, type Contract } from '../contract';
import type { FieldError } from '../errors';
import { parseDateTime } from '../timestamp';
import { compileValidator } from '../validate';

/**
 * POST /data/delete-range as its clients send it: `{start_time, end_time, device_name?}` (ours
 * and screenpipe's API docs) or `{start, end}` (screenpipe's server and desktop app, which also
 * sends `local_only`: tolerated and ignored, since a delete here always covers the content store,
 * the media files and the archive). One spelling of each bound; `end` is exclusive. Which fields
 * are required, and how the two spellings combine, is `dataDeleteRangeErrors`.
 */
export const dataDeleteRangeRequestSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    start_time: dateTimeSchema,
    end_time: dateTimeSchema,
    start: dateTimeSchema,
    end: dateTimeSchema,
    device_name: deviceNameSchema,
    local_only: { type: 'boolean' },
  },
} as const;

/**
 * POST /data/delete-device: `{device_name}` (ours), or screenpipe's `machine_id` (its server and
 * desktop app) or `device_id` (its API docs) for the same thing. Exactly one of them.
 */
export const dataDeleteDeviceRequestSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    device_name: deviceNameSchema,
    machine_id: deviceNameSchema,
    device_id: deviceNameSchema,
  },
} as const;

type Spellings<K extends string> = Partial<Record<K, string | undefined>>;

/** The one value of a field that has several spellings, or the error that says what is wrong. */
function oneOf<K extends string>(
  body: Spellings<K>,
  names: readonly [K, ...K[]],
  errors: FieldError[],
): string | undefined {
  const given = names.filter((name) => body[name] !== undefined);
  const [main, ...others] = names;
  if (given.length === 0) {
    errors.push({
      path: main,
      rule: 'required',
      detail: `${main} is required${others.length > 0 ? ` (or ${others.join(' or ')})` : ''}`,
    });
    return undefined;
  }
  if (given.length > 1) {
    errors.push({
      path: given[1]!,
      rule: 'conflict',
      detail: `${given.join(' and ')} name the same thing: send one of them`,
    });
    return undefined;
  }
  return body[given[0]!];
}

/** What a delete-range body asks for, its spellings resolved; `end` is exclusive. */
export interface DataDeleteRange {
  start: string;
  end: string;
  device_name?: string;
}

/**
 * The rules of a delete-range body the schema cannot say: a start and an end (one spelling
 * each), the start before the end (compared as instants), each error naming its field.
 */
export function dataDeleteRangeErrors(
  body: Spellings<'start_time' | 'start' | 'end_time' | 'end'>,
): FieldError[] {
  return resolveRange(body).errors;
}

function resolveRange(body: Spellings<'start_time' | 'start' | 'end_time' | 'end'>): {
  errors: FieldError[];
  start?: string;
  end?: string;
} {
  const errors: FieldError[] = [];
  const start = oneOf(body, ['start_time', 'start'], errors);
  const end = oneOf(body, ['end_time', 'end'], errors);
  if (start !== undefined && end !== undefined && parseDateTime(start) >= parseDateTime(end)) {
    const startName = body.start_time !== undefined ? 'start_time' : 'start';
    const endName = body.end_time !== undefined ? 'end_time' : 'end';
    errors.push(
      {
        path: startName,
        rule: 'range',
        detail: `${startName} must be before ${endName} (${endName} is exclusive)`,
      },
      {
        path: endName,
        rule: 'range',
        detail: `${endName} must be after ${startName} (${endName} is exclusive)`,
      },
    );
  }
  return {
    errors,
    ...(start !== undefined ? { start } : {}),
    ...(end !== undefined ? { end } : {}),
  };
}

/** A valid delete-range body (validators.dataDeleteRangeRequest passed) as one spelling. */
export function toDataDeleteRange(
  body: Spellings<'start_time' | 'start' | 'end_time' | 'end'> & { device_name?: string },
): DataDeleteRange {
  const { start, end } = resolveRange(body);
  if (start === undefined || end === undefined) throw new RangeError('not a valid delete range');
  return {
    start,
    end,
    ...(body.device_name !== undefined ? { device_name: body.device_name } : {}),
  };
}

const deviceSpellings = ['device_name', 'machine_id', 'device_id'] as const;

/** The rules of a delete-device body: exactly one of its spellings of the device. */
export function dataDeleteDeviceErrors(body: Spellings<(typeof deviceSpellings)[number]>) {
  const errors: FieldError[] = [];
  oneOf(body, [...deviceSpellings], errors);
  return errors;
}

/** The device a valid delete-device body names. */
export function toDeletedDevice(body: Spellings<(typeof deviceSpellings)[number]>): string {
  const device = oneOf(body, [...deviceSpellings], []);
  if (device === undefined) throw new RangeError('not a valid delete-device request');
  return device;
}

const count = { type: 'integer', minimum: 0 } as const;

/** One device's share of a delete. */
const deletedDeviceSchema = {
  type: 'object',
  required: ['device_name', 'items_deleted', 'archived_items_deleted'],
  additionalProperties: false,
  properties: {
    device_name: deviceNameSchema,
    items_deleted: count,
    archived_items_deleted: count,
  },
} as const;

/**
 * What a delete did (the worker's reply and the HTTP answer share it). A repeated delete answers
 * zeros: what it covers is gone already.
 */
const deletedCountsProperties = {
  /** Items removed from the content store (and from search). */
  items_deleted: count,
  /** screenpipe's names for the same items by kind, which its clients add up. */
  frames_deleted: count,
  audio_transcriptions_deleted: count,
  /** Media files removed under ARCHIVE_MEDIA_ROOT: only files no remaining item names. */
  media_files_deleted: count,
  /** screenpipe's names for those files: a frame's file is its video or image; no audio files. */
  video_files_deleted: count,
  audio_files_deleted: count,
  /** Archived items of the range newly recorded as deleted: no restore brings them back. */
  archived_items_deleted: count,
  /** Archived objects of the range that could not be read to count their items (still covered). */
  archived_objects_unreadable: count,
  /** Per device, names in order. */
  devices: { type: 'array', items: deletedDeviceSchema },
} as const;

const deletedCountsRequired = [
  'items_deleted',
  'frames_deleted',
  'audio_transcriptions_deleted',
  'media_files_deleted',
  'video_files_deleted',
  'audio_files_deleted',
  'archived_items_deleted',
  'archived_objects_unreadable',
  'devices',
] as const;

export const dataDeletedCountsSchema = {
  type: 'object',
  required: deletedCountsRequired,
  additionalProperties: false,
  properties: deletedCountsProperties,
} as const;

/** Response of POST /data/delete-range and /data/delete-device. */
export const dataDeleteResultSchema = {
  type: 'object',
  required: ['success', 'message', ...deletedCountsRequired],
  additionalProperties: false,
  properties: {
    success: { const: true },
    message: { type: 'string' },
    ...deletedCountsProperties,
  },
} as const;

export type DataDeleteRangeRequest = FromSchema<typeof dataDeleteRangeRequestSchema>;
export type DataDeleteDeviceRequest = FromSchema<typeof dataDeleteDeviceRequestSchema>;
export type DataDeletedCounts = FromSchema<typeof dataDeletedCountsSchema>;
export type DataDeleteResult = FromSchema<typeof dataDeleteResultSchema>;

export const dataDeleteRangeRoute: ApiOperation = {
  method: 'post',
  path: '/data/delete-range',
  operationId: 'dataDeleteRange',
  tag: 'data',
  summary: 'Delete what was captured in a time range',
  description:
    "screenpipe's route. The items of [start, end) (of one device when `device_name` is " +
    'given) leave the content store and search, with the media files under ARCHIVE_MEDIA_ROOT ' +
    'that no remaining item names; archived items of the range are recorded as deleted, so no ' +
    'restore brings them back (`archived_items_deleted` counts them). Bounds as ' +
    "`start_time`/`end_time` or screenpipe's `start`/`end` (one spelling each; its " +
    '`local_only` is ignored); `end` exclusive, so a 400 names both fields when it is not after ' +
    'the start. Idempotent: a repeated delete answers zeros. A token bound to devices must ' +
    'name one of its own (403 otherwise). Never beside an archive pass, restore or rekey: it ' +
    'waits up to 5 s for one to end, then is a 409 naming it. Answered by the archive worker ' +
    '(503 when none runs).',
  scope: 'data:delete',
  request: {
    schema: dataDeleteRangeRequestSchema,
    required: true,
    examples: {
      hour: {
        summary: "One device's hour",
        value: {
          start_time: '2026-11-01T10:00:00Z',
          end_time: '2026-11-01T11:00:00Z',
          device_name: 'MacBook Pro',
        },
      },
      screenpipe: {
        summary: "As screenpipe's desktop app sends it",
        value: { start: '2026-11-01T10:00:00Z', end: '2026-11-01T10:15:00Z', local_only: true },
      },
    },
  },
  response: {
    schema: dataDeleteResultSchema,
    description: 'What was deleted.',
    example: {
      success: true,
      message:
        'deleted 42 items and 3 media files of device "MacBook Pro" from 2026-11-01T10:00:00Z to 2026-11-01T11:00:00Z; 0 archived items will never be restored',
      items_deleted: 42,
      frames_deleted: 40,
      audio_transcriptions_deleted: 2,
      media_files_deleted: 3,
      video_files_deleted: 3,
      audio_files_deleted: 0,
      archived_items_deleted: 0,
      archived_objects_unreadable: 0,
      devices: [{ device_name: 'MacBook Pro', items_deleted: 42, archived_items_deleted: 0 }],
    },
  },
  errors: [...archiveErrors, ...bodyErrors, 409],
};

export const dataDeleteDeviceRoute: ApiOperation = {
  method: 'post',
  path: '/data/delete-device',
  operationId: 'dataDeleteDevice',
  tag: 'data',
  summary: 'Delete everything a device captured',
  description:
    'As /data/delete-range over all time for one device: its items, search entries, ' +
    'unreferenced media files, and its archived items recorded as deleted. The device as ' +
    "`device_name`, or screenpipe's `machine_id` (its app) or `device_id` (its docs): exactly " +
    'one. Idempotent. A token bound to devices deletes only its own (403 otherwise, whether ' +
    'or not the device has data).',
  scope: 'data:delete',
  request: {
    schema: dataDeleteDeviceRequestSchema,
    required: true,
    examples: { device: { summary: 'One device', value: { device_name: 'old-laptop' } } },
  },
  response: { schema: dataDeleteResultSchema, description: 'What was deleted.' },
  errors: [...archiveErrors, ...bodyErrors, 409],
};

export const dataDeleteContract = {
  validators: {
    dataDeleteRangeRequest: compileValidator<DataDeleteRangeRequest>(
      dataDeleteRangeRequestSchema,
      'delete-range request',
      (request) => dataDeleteRangeErrors(request),
    ),
    dataDeleteDeviceRequest: compileValidator<DataDeleteDeviceRequest>(
      dataDeleteDeviceRequestSchema,
      'delete-device request',
      (request) => dataDeleteDeviceErrors(request),
    ),
    dataDeleteResult: compileValidator<DataDeleteResult>(dataDeleteResultSchema, 'delete result'),
  },
  components: {
    DataDeleteRangeRequest: dataDeleteRangeRequestSchema,
    DataDeleteDeviceRequest: dataDeleteDeviceRequestSchema,
    DataDeleteResult: dataDeleteResultSchema,
  },
  operations: [dataDeleteRangeRoute, dataDeleteDeviceRoute],
} satisfies Contract;
