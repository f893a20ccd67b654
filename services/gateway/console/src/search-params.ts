/**
 * The Search view's state is GET /search's own parameters, kept in the page's hash
 * (`#/search?q=report&content_type=ocr`), so that reload, Back and a link from another view
 * (a device's search box) land on the same results. The hash never reaches the server.
 */

/** The parameters the form sets, as GET /search names them. */
export const searchFields = [
  'q',
  'content_type',
  'start_time',
  'end_time',
  'app_name',
  'window_name',
  'device_name',
  'order',
] as const;
export type SearchField = (typeof searchFields)[number];
export type SearchParams = Record<SearchField, string> & { offset: number };

export const pageSize = 20;

/** Time ranges the gateway resolves against its own clock (GET /search reads "24h ago"). */
export const sincePresets = [
  { start: '1h ago', label: 'Last hour' },
  { start: '24h ago', label: 'Last 24 hours' },
  { start: '7d ago', label: 'Last 7 days' },
  { start: '30d ago', label: 'Last 30 days' },
] as const;

export function readSearchParams(query: URLSearchParams): SearchParams {
  const params = Object.fromEntries(
    searchFields.map((field) => [field, (query.get(field) ?? '').trim()]),
  ) as Record<SearchField, string>;
  const offset = Number(query.get('offset') ?? '0');
  return { ...params, offset: Number.isSafeInteger(offset) && offset > 0 ? offset : 0 };
}

/** The hash's query: only what is set, so links stay short. */
export function writeSearchParams(params: SearchParams): URLSearchParams {
  const query = new URLSearchParams();
  for (const field of searchFields) if (params[field]) query.set(field, params[field]);
  if (params.offset > 0) query.set('offset', String(params.offset));
  return query;
}

/** GET /search's query for one page. */
export function toSearchQuery(params: SearchParams): URLSearchParams {
  const query = writeSearchParams(params);
  query.set('limit', String(pageSize));
  query.set('offset', String(params.offset));
  return query;
}

/** "21–40 of 137", "0 results". */
export function pageText(offset: number, shown: number, total: number, locale?: string): string {
  const n = new Intl.NumberFormat(locale);
  if (total === 0) return '0 results';
  if (shown === 0) return `none past ${n.format(offset)} of ${n.format(total)}`;
  return `${n.format(offset + 1)}–${n.format(offset + shown)} of ${n.format(total)}`;
}

const pad = (value: number) => String(value).padStart(2, '0');

/** An API time as a datetime-local input's value (local time, minutes); '' when not a time. */
export function toLocalInput(iso: string): string {
  const date = new Date(iso);
  if (!iso || Number.isNaN(date.getTime())) return '';
  return (
    `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}` +
    `T${pad(date.getHours())}:${pad(date.getMinutes())}`
  );
}

/** A datetime-local input's value (local time) as an API time with an offset (UTC, Z). */
export function fromLocalInput(value: string): string {
  const date = new Date(value);
  return value && !Number.isNaN(date.getTime()) ? date.toISOString() : '';
}
