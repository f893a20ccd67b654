/**
 * Timestamps as screenpipe's clients send them: whole seconds or 1-9 fraction digits, with Z or
 * a numeric offset. We store UTC; a date without a time or a time without an offset is
 * ambiguous and refused, and so is a calendar-impossible date (2026-02-30).
 */
const pattern =
  /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(?:[Zz]|([+-])(\d{2}):(\d{2}))$/;

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/** The proleptic Gregorian calendar, as Date uses (checked against it for every year 0-9999). */
export function daysInMonth(year: number, month: number): number {
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  return month === 2 && leap ? 29 : DAYS_IN_MONTH[month - 1]!;
}

// Checked several times per item on the ingest path (schema, ids, documents): plain arithmetic,
// no Date or closure per call.
export function isDateTimeWithOffset(value: string): boolean {
  const m = pattern.exec(value);
  if (!m) return false;
  const month = Number(m[2]);
  const day = Number(m[3]);
  return (
    month >= 1 &&
    month <= 12 &&
    day >= 1 &&
    day <= daysInMonth(Number(m[1]), month) &&
    Number(m[4]) <= 23 &&
    Number(m[5]) <= 59 &&
    Number(m[6]) <= 59 &&
    (m[8] === undefined || (Number(m[9]) <= 23 && Number(m[10]) <= 59))
  );
}

/** The instant a valid timestamp names (fractions past milliseconds are truncated). */
export function parseDateTime(value: string): Date {
  if (!isDateTimeWithOffset(value))
    throw new RangeError(`not an ISO 8601 date-time with offset: ${value}`);
  // Date.parse takes at most 3 fraction digits reliably across engines.
  const normalized = value.toUpperCase().replace(/(\.\d{3})\d+/, '$1');
  return new Date(normalized);
}

/**
 * The instant a valid timestamp names, in UTC with every fraction digit that was sent (up to 9;
 * trailing zeros dropped, so `.5Z` and `.500Z` are the same instant and the same text):
 * `2026-11-22T18:15:30.123456789+08:00` gives `2026-11-22T10:15:30.123456789Z`. A Date keeps
 * milliseconds only; this keeps what tells `.1234Z` from `.1235Z`.
 */
export function canonicalDateTime(value: string): string {
  const m = isDateTimeWithOffset(value) ? pattern.exec(value) : null;
  if (!m) throw new RangeError(`not an ISO 8601 date-time with offset: ${value}`);
  const fraction = (m[7] ?? '').replace(/0+$/, '');
  // Whole seconds carry the offset; the fraction is independent of it.
  const whole = value.toUpperCase().replace(/\.\d+/, '');
  const utc = new Date(whole).toISOString().replace(/\.\d{3}Z$/, '');
  return `${utc}${fraction ? `.${fraction}` : ''}Z`;
}

/**
 * The item timestamps every content store can take: within ±2^48 ms of the epoch (years -6949
 * to 10889). The SQLite store orders items by a 64-bit key built from the timestamp (libs/storage
 * sqlite.content-schema.ts) and refuses anything beyond; every date-time with a 4-digit year that
 * isDateTimeWithOffset accepts lies within. A gateway checks it before answering 200, so an item
 * the store would refuse is never accepted and then dead-lettered.
 */
export const MAX_STORABLE_TIMESTAMP_MS = 2 ** 48;

export function isStorableTimestamp(date: Date): boolean {
  return Math.abs(date.getTime()) < MAX_STORABLE_TIMESTAMP_MS;
}
