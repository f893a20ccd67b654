import type { AuditAction } from '@screenfleet/contracts';

/**
 * The Audit view's filters are GET /audit's own parameters, kept in the page's hash
 * (`#/audit?device=desk-17&action=operator.press`) like the Search view's, so reload and Back
 * keep them; times are kept as API times (UTC) and shown as local time in the form.
 */

/**
 * What rows name, in the contracts' order. Their one home is libs/contracts/src/http/audit.route.ts;
 * the console cannot import it at run time (ADR 0010), so they are restated and
 * audit-params.test.ts holds them equal to it.
 */
export const auditActions = [
  'operator.press',
  'operator.click',
  'operator.type',
  'token.create',
  'token.revoke',
  'token.enrol',
  'enrolment_code.create',
  'enrolment_code.revoke',
  'data.delete_range',
  'data.delete_device',
  'archive.restore',
] as const satisfies readonly AuditAction[];

export const auditFilterFields = ['device', 'token', 'action', 'from', 'to'] as const;
export type AuditFilterField = (typeof auditFilterFields)[number];
export type AuditFilters = Record<AuditFilterField, string>;

/** Rows per page: the API's default, said here so the request reads whole. */
export const auditPageSize = 100;

export function readAuditFilters(query: URLSearchParams): AuditFilters {
  const filters = Object.fromEntries(
    auditFilterFields.map((field) => [field, (query.get(field) ?? '').trim()]),
  ) as AuditFilters;
  // An action the console does not know would only earn a 400: dropped, as if not set.
  if (!(auditActions as readonly string[]).includes(filters.action)) filters.action = '';
  return filters;
}

/** The hash's query, and the filters of GET /audit's: only what is set. */
export function writeAuditFilters(filters: AuditFilters): URLSearchParams {
  const query = new URLSearchParams();
  for (const field of auditFilterFields) if (filters[field]) query.set(field, filters[field]);
  return query;
}

/** GET /audit's query for the first page, or for the page after `cursor` (older rows). */
export function toAuditQuery(filters: AuditFilters, cursor?: string): URLSearchParams {
  const query = writeAuditFilters(filters);
  query.set('limit', String(auditPageSize));
  if (cursor) query.set('cursor', cursor);
  return query;
}

/** "84 ms", "1.2 s", "95 s"; null (not measured): "". */
export function durationText(ms: number | null): string {
  if (ms === null) return '';
  if (ms < 1000) return `${Math.round(ms)} ms`;
  const seconds = ms / 1000;
  return `${seconds < 10 ? seconds.toFixed(1) : Math.round(seconds)} s`;
}

/** "ok", "refused (device_not_allowed)". */
export const outcomeText = (outcome: string, code: string | null): string =>
  code ? `${outcome} (${code})` : outcome;

/** How long a row's details may run in the table; the whole is in its title. */
export const detailsMaxChars = 160;

/**
 * A row's details on one line: `key=value` pairs, lists joined by commas (`modifiers=ctrl,shift`),
 * strings as they are unless they hold a space or are empty (then quoted), anything nested as
 * JSON; cut at `max` characters with an ellipsis.
 */
export function detailsText(details: Record<string, unknown>, max = detailsMaxChars): string {
  const text = Object.entries(details)
    .map(([key, value]) => `${key}=${valueText(value)}`)
    .join(' ');
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

function valueText(value: unknown): string {
  if (typeof value === 'string')
    return value === '' || /\s/.test(value) ? JSON.stringify(value) : value;
  if (Array.isArray(value) && value.every((item) => typeof item !== 'object' || item === null)) {
    return value.map((item) => valueText(item)).join(',');
  }
  return JSON.stringify(value) ?? String(value);
}
