import { limits } from './limits';
import {
  addRequestSchema,
  contentItemSchema,
  ocrResultSchema,
  transcriptionSchema,
} from './schemas/add-request.schema';
import {
  archiveActionResultSchema,
  archiveConfigureRequestSchema,
  archiveInitRequestSchema,
  archiveRestoreRequestSchema,
} from './schemas/archive.schema';
import { whoAmISchema } from './schemas/auth.schema';
import {
  dataDeleteDeviceRequestSchema,
  dataDeleteRangeRequestSchema,
  dataDeleteResultSchema,
} from './schemas/data-delete.schema';
import {
  agentStatuses,
  captureStatuses,
  deviceDetailSchema,
  deviceSortKeys,
  deviceSummarySchema,
  devicesAnswerSchema,
  healthAnswerSchema,
} from './schemas/devices.schema';
import { devicesDefaultLimit, devicesMaxLimit } from './devices-query';
import { dateTimeSchema, deviceNameSchema } from './schemas/common';
import {
  listedElementSchema,
  listElementsRequestSchema,
  listElementsResponseSchema,
} from './schemas/operator.schema';
import {
  cacheIdSchema,
  clickByIndexRequestSchema,
  pressKeyRequestSchema,
  typeByIndexRequestSchema,
} from './schemas/press-key.schema';
import {
  searchAnswerItemSchema,
  searchAnswerSchema,
  searchAudioContentSchema,
  searchOcrContentSchema,
  searchOrders,
} from './schemas/search.schema';
import {
  archiveStatusSchema,
  errorBodySchema,
  fieldErrorSchema,
  operationResultSchema,
} from './schemas/results.schema';

/**
 * The HTTP API as an OpenAPI 3.1 document, generated from the schemas the validators compile:
 * nothing here re-declares a body. Each exported schema becomes one component; wherever a schema
 * embeds another exported one (the very same object, as archiveActionResultSchema embeds
 * archiveStatusSchema), the document says `$ref` instead of repeating it. What is written here
 * is only what a schema cannot say: paths, methods, scopes, statuses and examples.
 */

type Json = null | boolean | number | string | readonly Json[] | { readonly [key: string]: Json };
type JsonObject = { [key: string]: Json };

/** Component name -> the contracts' schema, as exported. */
const componentSchemas = {
  AddRequest: addRequestSchema,
  ContentItem: contentItemSchema,
  OcrResult: ocrResultSchema,
  Transcription: transcriptionSchema,
  PressKeyRequest: pressKeyRequestSchema,
  ClickByIndexRequest: clickByIndexRequestSchema,
  TypeByIndexRequest: typeByIndexRequestSchema,
  ListElementsRequest: listElementsRequestSchema,
  ListElementsResponse: listElementsResponseSchema,
  ListedElement: listedElementSchema,
  CacheId: cacheIdSchema,
  OperationResult: operationResultSchema,
  ErrorBody: errorBodySchema,
  FieldError: fieldErrorSchema,
  ArchiveStatus: archiveStatusSchema,
  ArchiveConfigureRequest: archiveConfigureRequestSchema,
  ArchiveInitRequest: archiveInitRequestSchema,
  ArchiveRestoreRequest: archiveRestoreRequestSchema,
  ArchiveActionResult: archiveActionResultSchema,
  SearchAnswer: searchAnswerSchema,
  SearchAnswerItem: searchAnswerItemSchema,
  SearchOcrContent: searchOcrContentSchema,
  SearchAudioContent: searchAudioContentSchema,
  DevicesAnswer: devicesAnswerSchema,
  DeviceSummary: deviceSummarySchema,
  DeviceDetail: deviceDetailSchema,
  HealthAnswer: healthAnswerSchema,
  DeviceName: deviceNameSchema,
  DateTimeWithOffset: dateTimeSchema,
  WhoAmI: whoAmISchema,
  DataDeleteRangeRequest: dataDeleteRangeRequestSchema,
  DataDeleteDeviceRequest: dataDeleteDeviceRequestSchema,
  DataDeleteResult: dataDeleteResultSchema,
} as const;
export type ComponentName = keyof typeof componentSchemas;

// Keywords whose value is a schema, a map of schemas or a list of schemas (JSON Schema 2020-12
// and draft-07); every other keyword's value is data (const, enum, required, discriminator...).
const schemaKeywords = new Set([
  'items',
  'additionalItems',
  'additionalProperties',
  'contains',
  'propertyNames',
  'if',
  'then',
  'else',
  'not',
  'unevaluatedItems',
  'unevaluatedProperties',
]);
const schemaMapKeywords = new Set([
  'properties',
  'patternProperties',
  'definitions',
  '$defs',
  'dependentSchemas',
]);
const schemaListKeywords = new Set(['allOf', 'anyOf', 'oneOf', 'prefixItems']);

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * One schema as OpenAPI 3.1 needs it. The contracts' schemas are draft-07 (ajv's default `Ajv`
 * class compiles them, with no `$schema`); 3.1 speaks JSON Schema 2020-12. The keywords that
 * differ are renamed here, mechanically: `definitions` -> `$defs`, tuple `items` -> `prefixItems`
 * (with `additionalItems` -> `items`), `dependencies` -> `dependentRequired` /
 * `dependentSchemas`. A `$ref`/`$id` would need rebasing under #/components, so it is refused
 * rather than emitted broken. `refFor` names the component an embedded schema already is.
 */
export function toJsonSchema2020(
  schema: unknown,
  refFor: (node: object) => string | undefined = () => undefined,
): Json {
  const convert = (node: unknown, root: boolean): Json => {
    if (Array.isArray(node)) return node.map((item) => convert(item, false));
    if (!isObject(node)) return node as Json;
    const ref = root ? undefined : refFor(node);
    if (ref) return { $ref: ref };
    const out: JsonObject = {};
    const tuple = Array.isArray(node.items);
    for (const [key, value] of Object.entries(node)) {
      if (key === '$ref' || key === '$id') {
        throw new Error(`toJsonSchema2020: ${key} is not supported (it would need rebasing)`);
      }
      if (key === '$schema') continue;
      if (key === 'definitions') out.$defs = convertMap(value);
      else if (key === 'items' && tuple) out.prefixItems = convertList(value);
      else if (key === 'additionalItems') {
        if (tuple) out.items = convert(value, false);
      } else if (key === 'dependencies' && isObject(value)) {
        for (const [name, dependency] of Object.entries(value)) {
          const target = Array.isArray(dependency) ? 'dependentRequired' : 'dependentSchemas';
          const bucket = (out[target] ?? {}) as JsonObject;
          bucket[name] = Array.isArray(dependency)
            ? (dependency as Json[])
            : convert(dependency, false);
          out[target] = bucket;
        }
      } else if (schemaKeywords.has(key)) out[key] = convert(value, false);
      else if (schemaMapKeywords.has(key)) out[key] = convertMap(value);
      else if (schemaListKeywords.has(key)) out[key] = convertList(value);
      else out[key] = structuredClone(value) as Json;
    }
    return out;
  };
  const convertMap = (map: unknown): Json =>
    isObject(map)
      ? Object.fromEntries(Object.entries(map).map(([name, sub]) => [name, convert(sub, false)]))
      : (map as Json);
  const convertList = (list: unknown): Json =>
    Array.isArray(list) ? list.map((sub) => convert(sub, false)) : (list as Json);
  return convert(schema, true);
}

export type ApiScope =
  'ingest' | 'operator' | 'archive:read' | 'archive:write' | 'search' | 'data:delete';
export type ErrorStatus = 400 | 401 | 403 | 404 | 405 | 409 | 413 | 415 | 500 | 502 | 503 | 504;

interface Example {
  summary: string;
  value: Json;
}

/** A query parameter, as OpenAPI writes it. */
export interface QueryParameter {
  name: string;
  description: string;
  schema: JsonObject;
  example?: Json;
}

/** One route as the gateway serves it: what no schema can say. */
export interface ApiOperation {
  method: 'get' | 'post';
  path: string;
  operationId: string;
  tag: 'ingest' | 'search' | 'fleet' | 'operator' | 'archive' | 'data' | 'auth' | 'meta';
  summary: string;
  description: string;
  /** Null: served without a token. `any`: any valid token (or the tokenless loopback grant). */
  scope: ApiScope | 'any' | null;
  request?: { schema: ComponentName; required: boolean; examples: Record<string, Example> };
  /** Query parameters (GET routes). */
  parameters?: readonly QueryParameter[];
  /** Path parameters, one per `{name}` in `path`. */
  pathParameters?: readonly QueryParameter[];
  response: { schema: ComponentName | null; description: string; example?: Json };
  errors: readonly ErrorStatus[];
}

const authErrors = [401, 403, 405, 500] as const;
const bodyErrors = [400, 413, 415] as const;
const archiveErrors = [...authErrors, 502, 503] as const;
const operatorErrors = [...authErrors, ...bodyErrors, 404, 503, 504] as const;

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

const sampleStatus = {
  enabled: true,
  retention_days: 7,
  watermark: '2026-11-15T00:00:00.000Z',
  last_cleanup: '2026-11-22T03:00:00.000Z',
  last_error: null,
  storage_used: 1_048_576,
  storage_limit: 0,
  pending_count: 12,
  is_uploading: false,
  chunks_uploaded: 3,
  media_files_uploaded: 40,
  media_files_pending: 0,
} satisfies Json;

/** Every route the gateway's API port serves (its /metrics, /healthz and /readyz are on the ops port). */
export const apiOperations: readonly ApiOperation[] = [
  {
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
      schema: 'SearchAnswer',
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
  },
  {
    method: 'post',
    path: '/add',
    operationId: 'addContent',
    tag: 'ingest',
    summary: 'Push a batch of captured frames or a transcription',
    description:
      'Answers 200 only after RabbitMQ confirmed the batch (durable); a re-sent batch never ' +
      'duplicates an item. A token bound to devices may only push for those (403 otherwise). ' +
      `Body at most ${limits.maxBodyBytes} bytes; an item too large for one broker message is a 413.`,
    scope: 'ingest',
    request: {
      schema: 'AddRequest',
      required: true,
      examples: {
        frames: {
          summary: 'OCR frames',
          value: {
            device_name: 'MacBook Pro',
            content: {
              content_type: 'frames',
              data: [
                {
                  file_path: '/data/frames/2026-11-22/10-00-00.mp4',
                  timestamp: '2026-11-22T10:00:00.123Z',
                  app_name: 'Chromium',
                  window_name: 'screenfleet - README',
                  ocr_results: [{ text: 'Hello', confidence: 0.97, focused: true }],
                  tags: ['work'],
                },
              ],
            },
          },
        },
        transcription: {
          summary: 'An audio transcription',
          value: {
            device_name: 'MacBook Pro',
            content: {
              content_type: 'transcription',
              data: { transcription: 'good morning', transcription_engine: 'whisper' },
            },
          },
        },
      },
    },
    response: {
      schema: 'OperationResult',
      description: 'The batch is durable in the broker.',
      example: { success: true, message: 'accepted 1 items for device MacBook Pro' },
    },
    errors: [...authErrors, ...bodyErrors, 503],
  },
  {
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
      schema: 'ListElementsRequest',
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
    response: { schema: 'ListElementsResponse', description: 'The listing and its snapshot.' },
    errors: operatorErrors,
  },
  {
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
      schema: 'PressKeyRequest',
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
    response: { schema: 'OperationResult', description: 'The key was pressed.' },
    errors: [...operatorErrors, 409],
  },
  {
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
      schema: 'ClickByIndexRequest',
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
      schema: 'OperationResult',
      description: 'The element was clicked.',
      example: { success: true, message: "clicked element 12 (push button 'Submit')" },
    },
    errors: [...operatorErrors, 409],
  },
  {
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
      schema: 'TypeByIndexRequest',
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
      schema: 'OperationResult',
      description: 'The text was typed and the element shows it.',
      example: { success: true, message: "typed 11 characters into element 3 (entry 'Name')" },
    },
    errors: [...operatorErrors, 409],
  },
  {
    method: 'get',
    path: '/archive/status',
    operationId: 'archiveStatus',
    tag: 'archive',
    summary: "The archive's state and counters",
    description:
      'Asked of the archive workers over the broker. The query (`?timezone=`) is accepted ' +
      'whatever its value and ignored: every time is ISO 8601 UTC with `Z`.',
    scope: 'archive:read',
    parameters: [
      {
        name: 'timezone',
        description: "Accepted (screenpipe's UI sends it) and ignored: times are UTC.",
        schema: { type: 'string' },
      },
    ],
    response: {
      schema: 'ArchiveStatus',
      description: 'The archive status.',
      example: sampleStatus,
    },
    errors: archiveErrors,
  },
  {
    method: 'post',
    path: '/archive/configure',
    operationId: 'archiveConfigure',
    tag: 'archive',
    summary: 'Turn the archive on or off, change its retention',
    description:
      '`{}` (or no body with a JSON Content-Type) changes nothing and answers the status.',
    scope: 'archive:write',
    request: {
      schema: 'ArchiveConfigureRequest',
      required: false,
      examples: {
        enable: {
          summary: 'Archive items older than 7 days',
          value: { enabled: true, retention_days: 7 },
        },
      },
    },
    response: {
      schema: 'ArchiveActionResult',
      description: 'The status after the change.',
      example: { success: true, message: 'archive configuration updated', status: sampleStatus },
    },
    errors: [...archiveErrors, ...bodyErrors],
  },
  {
    method: 'post',
    path: '/archive/init',
    operationId: 'archiveInit',
    tag: 'archive',
    summary: 'Initialise and enable the archive',
    description:
      "As screenpipe's desktop app sends it; its cloud `token` is tolerated and never relayed. " +
      '409 when the archive is already initialised.',
    scope: 'archive:write',
    request: {
      schema: 'ArchiveInitRequest',
      required: false,
      examples: { init: { summary: 'Keep 30 days locally', value: { retention_days: 30 } } },
    },
    response: { schema: 'ArchiveActionResult', description: 'The status after initialising.' },
    errors: [...archiveErrors, ...bodyErrors, 409],
  },
  {
    method: 'post',
    path: '/archive/run',
    operationId: 'archiveRun',
    tag: 'archive',
    summary: 'Start an archive pass now',
    description: 'No body is read (whatever is sent is ignored).',
    scope: 'archive:write',
    response: { schema: 'ArchiveActionResult', description: 'The status once the pass started.' },
    errors: archiveErrors,
  },
  {
    method: 'post',
    path: '/archive/restore',
    operationId: 'archiveRestore',
    tag: 'archive',
    summary: 'Put archived items of a time range back, idempotently',
    description:
      'Needs the archive disabled first (409 otherwise), so the next pass does not move the ' +
      "items out again. A restore that outlasts the gateway's restore timeout answers 503 and " +
      'goes on; sending it again is safe. `from` must be before `to` (`to` is exclusive): ' +
      'otherwise a 400 naming both fields (rule `range`). Never beside an archive pass or a ' +
      'rekey: it waits up to 5 s for one to end, then is a 409 naming it. Archived objects it ' +
      'cannot read (a key that is not configured, damage) are named in `unreadable` and ' +
      '`last_error`; every other item is restored.',
    scope: 'archive:write',
    request: {
      schema: 'ArchiveRestoreRequest',
      required: true,
      examples: {
        day: {
          summary: "One device's day",
          value: {
            from: '2026-11-01T00:00:00Z',
            to: '2026-11-02T00:00:00Z',
            device_name: 'MacBook Pro',
          },
        },
      },
    },
    response: {
      schema: 'ArchiveActionResult',
      description:
        'The status after the restore, with `restored`: items put back, and `unreadable`: the archived objects it could not read.',
    },
    errors: [...archiveErrors, ...bodyErrors, 409],
  },
  {
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
      schema: 'DataDeleteRangeRequest',
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
      schema: 'DataDeleteResult',
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
  },
  {
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
      schema: 'DataDeleteDeviceRequest',
      required: true,
      examples: { device: { summary: 'One device', value: { device_name: 'old-laptop' } } },
    },
    response: { schema: 'DataDeleteResult', description: 'What was deleted.' },
    errors: [...archiveErrors, ...bodyErrors, 409],
  },
  {
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
      schema: 'DevicesAnswer',
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
  },
  {
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
    response: { schema: 'DeviceDetail', description: 'The device and its timeline.' },
    errors: [...authErrors, 404, 502, 503],
  },
  {
    method: 'get',
    path: '/health',
    operationId: 'health',
    tag: 'meta',
    summary: "screenpipe's health: is capture flowing, is the service whole",
    description:
      "screenpipe's GET /health shape for its clients, which poll it; no token needed and no " +
      'device names. Always HTTP 200, the state in the body, as screenpipe answers: `healthy` ' +
      '(200); `unhealthy` (500) when the newest frame or transcription is older than ' +
      'CAPTURE_STALL_AFTER (`stale`; `no data` when none); `degraded` (503) when the broker, the ' +
      'content store or the ingest workers are unavailable, `message` naming which. A valid token ' +
      'bound to devices narrows the times to its devices. The times may be up to about a second ' +
      'old: each gateway reads them about once a second, however many clients poll. Without a ' +
      'valid token the request must be addressed to a loopback Host (127.0.0.1, localhost, [::1]) ' +
      'or one in GATEWAY_HEALTH_ALLOWED_HOSTS, else 403 (DNS rebinding); with one, any Host.',
    scope: null,
    response: {
      schema: 'HealthAnswer',
      description: 'The state.',
      example: {
        status: 'healthy',
        status_code: 200,
        last_frame_timestamp: '2026-11-22T10:00:00.123Z',
        last_audio_timestamp: '2026-11-22T09:59:58.000Z',
        frame_status: 'ok',
        audio_status: 'ok',
        message: 'all systems are functioning normally.',
        verbose_instructions: null,
      },
    },
    errors: [403, 405],
  },
  {
    method: 'get',
    path: '/auth/whoami',
    operationId: 'whoAmI',
    tag: 'auth',
    summary: 'What the caller may do: its token id, scopes and devices',
    description:
      'For clients that offer only what their token allows (the console at `/console`). With ' +
      'no Authorization header it answers the tokenless loopback grant where that applies ' +
      '(GATEWAY_ALLOW_UNAUTHENTICATED_LOOPBACK, a loopback peer, Host and Origin), else 401. ' +
      'The token itself is never echoed.',
    scope: 'any',
    response: {
      schema: 'WhoAmI',
      description: 'The grant the request was authenticated with.',
      example: {
        token_id: 'sre-console',
        grant: 'token',
        scopes: ['search', 'archive:read', 'operator'],
        devices: null,
      },
    },
    errors: [401, 403, 405, 500],
  },
  {
    method: 'get',
    path: '/openapi.json',
    operationId: 'openApiDocument',
    tag: 'meta',
    summary: 'This document',
    description:
      'Served without a token: it describes the API and holds no data, and a client needs it ' +
      'before it has a token.',
    scope: null,
    response: { schema: null, description: 'The OpenAPI 3.1 document.' },
    errors: [405],
  },
];

const errorExample = (message: string, code?: string, errors: Json[] = []): Json => ({
  success: false,
  message,
  errors,
  ...(code ? { code } : {}),
});

const retryAfter = {
  'Retry-After': {
    description: 'Seconds to wait before asking again.',
    schema: { type: 'integer' },
  },
};

/** What each error status means on this API; the body is always ErrorBody. */
const errorResponses: Record<
  ErrorStatus,
  { name: string; description: string; example: Json; headers?: JsonObject }
> = {
  400: {
    name: 'BadRequest',
    description:
      'The body is not JSON or not UTF-8, or fields break rules: each is named in `errors` ' +
      '(at most 50). Arrays over 1000 elements, objects over 1000 keys and nesting over 1000 ' +
      'levels are refused before the body is parsed.',
    example: errorExample('invalid add request: device_name is required', 'validation_failed', [
      { path: 'device_name', rule: 'required', detail: 'device_name is required' },
    ]),
  },
  401: {
    name: 'Unauthorized',
    description: 'No bearer token, or one that is not valid.',
    example: errorExample('a bearer token is required (Authorization: Bearer <token>)'),
    headers: { 'WWW-Authenticate': { schema: { type: 'string', const: 'Bearer' } } },
  },
  403: {
    name: 'Forbidden',
    description:
      "The token lacks the route's scope or is not bound to the device; or a tokenless " +
      'request names a foreign Host or Origin (DNS rebinding; GET /health: only the Host).',
    example: errorExample('token desk-1 lacks the operator scope'),
  },
  404: {
    name: 'NotFound',
    description: 'No operator agent is connected for the device (or the route does not exist).',
    example: errorExample('no agent is connected for device "desk-1"', 'device_unavailable'),
  },
  405: {
    name: 'MethodNotAllowed',
    description: 'The path exists, the method does not; `Allow` lists the methods.',
    example: errorExample('PUT is not allowed on /add'),
    headers: { Allow: { schema: { type: 'string' } } },
  },
  409: {
    name: 'Conflict',
    description:
      'Press, click, type: the listing is not the current one, the element changed or is gone, ' +
      'or cannot take the action (nothing pressed, clicked or typed). ' +
      'Archive: already initialised (init), still enabled or busy with a pass or a rekey (restore).',
    example: errorExample('the archive is already initialised', 'conflict'),
  },
  413: {
    name: 'PayloadTooLarge',
    description: `The body is over ${limits.maxBodyBytes} bytes, or one item is too large for a broker message.`,
    example: errorExample(`the body is larger than ${limits.maxBodyBytes} bytes`),
  },
  415: {
    name: 'UnsupportedMediaType',
    description:
      'Content-Type is not application/json, its charset is not utf-8 (refused before the body is read), or Content-Encoding is unknown.',
    example: errorExample('Content-Type must be application/json', undefined, [
      { path: '', rule: 'content-type', detail: 'got text/plain' },
    ]),
  },
  500: {
    name: 'InternalError',
    description:
      '`outcome_unknown`: a command was sent but its answer was lost, so it may have run; check ' +
      'before sending it again (no Retry-After). `operation_failed`: the agent or worker failed.',
    example: errorExample('the answer to the key press was lost', 'outcome_unknown'),
  },
  502: {
    name: 'BadGateway',
    description:
      'The archive worker (or, for /search, the ingest worker) answered something that breaks ' +
      'the contract, or refused a request the gateway built.',
    example: errorExample('the archive worker sent an invalid reply: status is required'),
  },
  503: {
    name: 'ServiceUnavailable',
    description:
      'The broker, the store, the desktop, the archive worker or (for /search) the ingest ' +
      'workers are unavailable (or did not answer in time); come back after `Retry-After`.',
    example: errorExample('broker blocked: low on memory', 'broker_unavailable'),
    headers: retryAfter,
  },
  504: {
    name: 'GatewayTimeout',
    description: 'The operator agent did not answer in time; nothing is pressed after this answer.',
    example: errorExample('the agent did not answer within 10000 ms', 'timeout'),
  },
};

const scopeText: Record<ApiScope | 'any', string> = {
  any: 'Any valid token; tokenless from loopback when GATEWAY_ALLOW_UNAUTHENTICATED_LOOPBACK=true.',
  ingest:
    'Scope `ingest`; tokenless from loopback when GATEWAY_ALLOW_UNAUTHENTICATED_LOOPBACK=true.',
  operator: 'Scope `operator`; always needs a token.',
  'archive:read':
    'Scope `archive:read`; tokenless from loopback when GATEWAY_ALLOW_UNAUTHENTICATED_LOOPBACK=true.',
  'archive:write':
    'Scope `archive:write`; tokenless from loopback when GATEWAY_ALLOW_UNAUTHENTICATED_LOOPBACK=true.',
  search:
    'Scope `search`; tokenless from loopback when GATEWAY_ALLOW_UNAUTHENTICATED_LOOPBACK=true.',
  'data:delete':
    'Scope `data:delete`; always needs a token (never granted by the tokenless loopback switch).',
};

const schemaRef = (name: ComponentName) => ({ $ref: `#/components/schemas/${name}` });

function operationObject(operation: ApiOperation): JsonObject {
  const responses: JsonObject = {
    200: {
      description: operation.response.description,
      content: {
        'application/json': {
          schema: operation.response.schema
            ? schemaRef(operation.response.schema)
            : { type: 'object' },
          ...(operation.response.example === undefined
            ? {}
            : { example: operation.response.example }),
        },
      },
    },
  };
  for (const status of [...new Set(operation.errors)].sort((a, b) => a - b)) {
    responses[status] = { $ref: `#/components/responses/${errorResponses[status].name}` };
  }
  const out: JsonObject = {
    operationId: operation.operationId,
    tags: [operation.tag],
    summary: operation.summary,
    description: operation.scope
      ? `${scopeText[operation.scope]}\n\n${operation.description}`
      : `No authentication.\n\n${operation.description}`,
    // OpenAPI 3.1 lets a bearer requirement name the roles it needs: the token's scope.
    security:
      operation.scope === null
        ? []
        : [{ bearerAuth: operation.scope === 'any' ? [] : [operation.scope] }],
    responses,
  };
  if (operation.request) {
    out.requestBody = {
      required: operation.request.required,
      content: {
        'application/json': {
          schema: schemaRef(operation.request.schema),
          examples: operation.request.examples as unknown as Json,
        },
      },
    };
  }
  if (operation.parameters || operation.pathParameters) {
    out.parameters = [
      ...(operation.pathParameters ?? []).map((parameter) => ({
        in: 'path',
        required: true,
        ...parameter,
      })),
      ...(operation.parameters ?? []).map((parameter) => ({
        in: 'query',
        required: false,
        ...parameter,
      })),
    ];
  }
  return out;
}

/** The OpenAPI 3.1 document of the gateway's API port, built afresh (callers may keep it). */
export function buildOpenApiDocument(): JsonObject {
  const names = new Map<object, string>(
    Object.entries(componentSchemas).map(([name, schema]) => [
      schema,
      `#/components/schemas/${name}`,
    ]),
  );
  const schemas = Object.fromEntries(
    Object.entries(componentSchemas).map(([name, schema]) => [
      name,
      toJsonSchema2020(schema, (node) => names.get(node)),
    ]),
  );
  const paths: JsonObject = {};
  for (const operation of apiOperations) {
    const item = (paths[operation.path] ?? {}) as JsonObject;
    item[operation.method] = operationObject(operation);
    paths[operation.path] = item;
  }
  const responses = Object.fromEntries(
    Object.values(errorResponses).map(({ name, description, example, headers }) => [
      name,
      {
        description,
        ...(headers ? { headers } : {}),
        content: { 'application/json': { schema: schemaRef('ErrorBody'), example } },
      },
    ]),
  );
  return {
    openapi: '3.1.0',
    info: {
      title: 'screenfleet gateway',
      version: '0.1.0',
      description:
        "screenpipe-compatible HTTP API: content ingest and search, remote key presses, archive. Bodies' " +
        'rules are in libs/contracts/README.md. Schema extensions: format `date-time-offset` is ' +
        'an ISO 8601 date-time with a UTC offset (`Z`, `+08:00`); `x-max-bytes` bounds a string ' +
        'in UTF-8 bytes; `x-key-name` is a key name, modifier or key combination (a 400 lists ' +
        'the allowed names). Unknown fields are dropped, not refused.',
      license: { name: 'MIT', identifier: 'MIT' },
    },
    tags: [
      { name: 'ingest', description: 'Captured content in.' },
      { name: 'search', description: 'Captured content back out.' },
      { name: 'fleet', description: 'Which devices the service knows, and how they are doing.' },
      {
        name: 'operator',
        description: "Key presses, clicks and typing into a device's desktop (experimental).",
      },
      { name: 'archive', description: 'Moving old items to an archive store and back.' },
      { name: 'data', description: 'Deleting what was captured.' },
      { name: 'auth', description: "The caller's own grant." },
      { name: 'meta', description: 'This description.' },
    ],
    security: [{ bearerAuth: [] }],
    paths,
    components: {
      securitySchemes: {
        bearerAuth: {
          type: 'http',
          scheme: 'bearer',
          description:
            'Authorization: Bearer <token>. Tokens (GATEWAY_TOKENS) carry scopes (`ingest`, ' +
            '`search`, `operator`, `archive:read`, `archive:write`, `data:delete`) and may be ' +
            'bound to device ' +
            'names; each ' +
            "route's scope is in its security requirement and description.",
        },
      },
      schemas,
      responses,
    },
  };
}
