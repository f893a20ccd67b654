import { ValidationError, type FieldError } from './errors';
import { utf8Length } from './json-shape';
import { limits } from './limits';
import { deviceNameSchema } from './common.schema';
import { searchOrders } from './http/search.route';
import { isDateTimeWithOffset, parseDateTime } from './timestamp';
import type { ContentType } from './http/add.route';

export type SearchOrder = (typeof searchOrders)[number];

/** GET /search's query string, checked and resolved (relative times against the caller's clock). */
export interface SearchParameters {
  /** The words to match ('' = no text filter). */
  q: string;
  /** Our content types; empty when only types we never store were asked for (ui, input...). */
  contentTypes: ContentType[];
  /** Inclusive. */
  from?: Date;
  to?: Date;
  deviceName?: string;
  appName?: string;
  windowName?: string;
  minLength?: number;
  maxLength?: number;
  maxContentLength?: number;
  order: SearchOrder;
  /** At most limits.maxSearchLimit: a larger `limit` is capped, not refused. */
  limit: number;
  offset: number;
}

/**
 * content_type words and what they select here. screenpipe's clients still send older values:
 * `vision` (2.x SDK) is our `ocr`; `ui`, `accessibility`, `input` and `memory` name content we
 * never store, so they select nothing (an empty answer, not a 400 that would break the client).
 */
const contentTypeWords: Record<string, readonly ContentType[]> = {
  all: ['frames', 'transcription'],
  ocr: ['frames'],
  vision: ['frames'],
  audio: ['transcription'],
  ui: [],
  accessibility: [],
  input: [],
  memory: [],
};
const contentTypeOrder: readonly ContentType[] = ['frames', 'transcription'];

/** The parameters GET /search reads; any other is ignored (`timezone` among them). */
export const searchParameterNames = [
  'q',
  'content_type',
  'limit',
  'offset',
  'start_time',
  'end_time',
  'app_name',
  'window_name',
  'device_name',
  'min_length',
  'max_length',
  'max_content_length',
  'order',
] as const;
type SearchParameterName = (typeof searchParameterNames)[number];

const MS = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 } as const;
const unitMs: Record<string, number> = {
  s: MS.s,
  sec: MS.s,
  secs: MS.s,
  second: MS.s,
  seconds: MS.s,
  m: MS.m,
  min: MS.m,
  mins: MS.m,
  minute: MS.m,
  minutes: MS.m,
  h: MS.h,
  hr: MS.h,
  hrs: MS.h,
  hour: MS.h,
  hours: MS.h,
  d: MS.d,
  day: MS.d,
  days: MS.d,
  w: MS.w,
  week: MS.w,
  weeks: MS.w,
};
// `16h ago`, `2d`, `30 minutes ago`; the space may arrive as `+` when a client encoded it so.
const relativeTime = /^(\d{1,9})[\s+]*([a-z]+)(?:[\s+]+ago)?$/;

const timeRule =
  'an RFC 3339 date-time with an offset (2026-11-22T10:00:00Z; a space for the T is fine) or a relative time (now, 16h ago, 2d, 30m, 1w)';

/**
 * Parses GET /search's query as express (or URLSearchParams) decoded it: each value a string,
 * or an array when the parameter was repeated. Unknown parameters are ignored (timezone,
 * include_frames, speaker_ids, browser_url...), an empty value is an absent one, and a known
 * parameter given twice is a 400 (which one would apply is a guess; screenpipe refuses it too).
 * Throws ValidationError naming every bad parameter (`query.limit`) and its rule.
 */
export function parseSearchQuery(
  query: Readonly<Record<string, unknown>>,
  now: Date,
): SearchParameters {
  const errors: FieldError[] = [];
  const fail = (param: SearchParameterName, rule: string, detail: string): undefined => {
    errors.push({ path: `query.${param}`, rule, detail });
    return undefined;
  };
  const text = (param: SearchParameterName): string | undefined => {
    const value = Object.prototype.hasOwnProperty.call(query, param) ? query[param] : undefined;
    if (Array.isArray(value)) {
      return fail(param, 'repeated', `${param} is given ${value.length} times; send it once`);
    }
    if (value === undefined || value === '') return undefined;
    if (typeof value !== 'string') return fail(param, 'type', `${param} must be a string`);
    return value;
  };
  const integer = (param: SearchParameterName, min: number, max: number): number | undefined => {
    const value = text(param);
    if (value === undefined) return undefined;
    if (!/^\d+$/.test(value)) {
      return fail(param, 'type', `${param} must be a whole number, got "${clip(value)}"`);
    }
    const number = Number(value);
    if (number < min) return fail(param, 'minimum', `${param} must be at least ${min}`);
    if (number > max) return fail(param, 'maximum', `${param} must be at most ${max}`);
    return number;
  };
  const time = (param: SearchParameterName): Date | undefined => {
    const value = text(param);
    if (value === undefined) return undefined;
    const instant = parseSearchTime(value, now);
    return instant ?? fail(param, 'format', `${param} must be ${timeRule}, got "${clip(value)}"`);
  };
  const name = (param: SearchParameterName): string | undefined => {
    const value = text(param);
    if (value !== undefined && [...value].length > limits.maxNameLength) {
      return fail(
        param,
        'maxLength',
        `${param} must be at most ${limits.maxNameLength} characters`,
      );
    }
    return value;
  };

  const q = text('q') ?? '';
  if ([...q].length > limits.maxSearchQueryLength) {
    fail('q', 'maxLength', `q must be at most ${limits.maxSearchQueryLength} characters`);
  }
  const contentTypes = parseContentTypes(text('content_type') ?? 'all', fail);
  // Any size is capped below, however many digits (clients pass their own page size through).
  const limit = integer('limit', 1, Number.POSITIVE_INFINITY);
  const offset = integer('offset', 0, limits.maxSearchInteger);
  const from = time('start_time');
  const to = time('end_time');
  const deviceName = parseDeviceName(text('device_name'), fail);
  const appName = name('app_name');
  const windowName = name('window_name');
  const minLength = integer('min_length', 0, limits.maxSearchInteger);
  const maxLength = integer('max_length', 0, limits.maxSearchInteger);
  const maxContentLength = integer('max_content_length', 1, limits.maxSearchInteger);
  const order = text('order') ?? 'newest';
  if (!(searchOrders as readonly string[]).includes(order)) {
    fail('order', 'enum', `order must be one of: ${searchOrders.join(', ')}`);
  }
  if (from && to && from > to) {
    fail('start_time', 'range', 'start_time must not be after end_time');
  }
  if (minLength !== undefined && maxLength !== undefined && minLength > maxLength) {
    fail('min_length', 'range', 'min_length must not be more than max_length');
  }
  if (errors.length > 0) {
    const more = errors.length > 1 ? ` (and ${errors.length - 1} more)` : '';
    throw new ValidationError(`invalid search query: ${errors[0]?.detail}${more}`, errors);
  }

  return {
    q,
    contentTypes: contentTypes ?? [],
    ...(from ? { from } : {}),
    ...(to ? { to } : {}),
    ...(deviceName !== undefined ? { deviceName } : {}),
    ...(appName !== undefined ? { appName } : {}),
    ...(windowName !== undefined ? { windowName } : {}),
    ...(minLength !== undefined ? { minLength } : {}),
    ...(maxLength !== undefined ? { maxLength } : {}),
    ...(maxContentLength !== undefined ? { maxContentLength } : {}),
    order: order as SearchOrder,
    limit: Math.min(limit ?? limits.searchDefaultLimit, limits.maxSearchLimit),
    offset: offset ?? 0,
  };
}

/**
 * `audio+ocr` and its kin: the words joined by `+`, which arrives as a space when the client
 * did not encode it (`%2B`). The union of what each word selects, in a fixed order.
 */
function parseContentTypes(
  value: string,
  fail: (param: SearchParameterName, rule: string, detail: string) => undefined,
): ContentType[] | undefined {
  const words = value
    .toLowerCase()
    .split(/[+\s]+/)
    .filter(Boolean);
  const unknown = words.filter((word) => !Object.hasOwn(contentTypeWords, word));
  if (words.length === 0 || unknown.length > 0) {
    return fail(
      'content_type',
      'enum',
      `content_type must be one of ${Object.keys(contentTypeWords).join(', ')}, or several joined by "+" (audio+ocr); got "${clip(value)}"`,
    );
  }
  const selected = new Set(words.flatMap((word) => contentTypeWords[word] ?? []));
  return contentTypeOrder.filter((type) => selected.has(type));
}

/** The rules of a device name in a body (deviceNameSchema), for the query parameter. */
function parseDeviceName(
  value: string | undefined,
  fail: (param: SearchParameterName, rule: string, detail: string) => undefined,
): string | undefined {
  if (value === undefined) return undefined;
  const max = deviceNameSchema.maxLength;
  if ([...value].length > max) {
    return fail('device_name', 'maxLength', `device_name must be at most ${max} characters`);
  }
  if (utf8Length(value) > deviceNameSchema['x-max-bytes']) {
    return fail(
      'device_name',
      'maxBytes',
      `device_name must be at most ${deviceNameSchema['x-max-bytes']} bytes in UTF-8`,
    );
  }
  if (!new RegExp(deviceNameSchema.pattern).test(value)) {
    return fail('device_name', 'pattern', 'device_name must not contain control characters');
  }
  return value;
}

/**
 * A search bound: `now`; a relative time in the past (`16h ago`, `2d`, `30m`, `1w`: s, m, h, d,
 * w or their words); or an RFC 3339 date-time with an offset, with `T` or a space between date
 * and time. A `+` offset that arrived as a space (a client that did not encode it) is read as
 * `+`. Undefined when it is none of these or names no representable instant.
 */
export function parseSearchTime(value: string, now: Date): Date | undefined {
  const trimmed = value.trim().toLowerCase();
  if (trimmed === 'now') return new Date(now.getTime());
  const relative = relativeTime.exec(trimmed);
  if (relative) {
    const ms = unitMs[relative[2] ?? ''];
    if (ms === undefined) return undefined;
    return representable(new Date(now.getTime() - Number(relative[1]) * ms));
  }
  const rfc3339 = trimmed
    .replace(/^(\d{4}-\d{2}-\d{2}) (?=\d)/, '$1T')
    .replace(/(\d{2}:\d{2}:\d{2}(?:\.\d+)?) (\d{2}:\d{2})$/, '$1+$2');
  return isDateTimeWithOffset(rfc3339) ? representable(parseDateTime(rfc3339)) : undefined;
}

// Dates before year 0 or past 9999 have no 4-digit ISO form to send to the worker.
const representable = (date: Date): Date | undefined => {
  const year = date.getUTCFullYear();
  return Number.isFinite(date.getTime()) && year >= 0 && year <= 9999 ? date : undefined;
};

const clip = (value: string) => (value.length > 64 ? `${value.slice(0, 64)}...` : value);
