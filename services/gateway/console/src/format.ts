/**
 * Numbers and times in the units people read: bytes as kB / MB / GB (powers of 1000, as disks
 * and most tools label them), instants as local date and time and as "3 minutes ago". `locale`
 * is the browser's unless a test pins it.
 */

const byteUnits = ['B', 'kB', 'MB', 'GB', 'TB', 'PB'] as const;

export function formatBytes(bytes: number, locale?: string): string {
  let value = bytes;
  let unit = 0;
  while (value >= 1000 && unit < byteUnits.length - 1) {
    value /= 1000;
    unit += 1;
  }
  // One decimal below 10 (1.4 MB), whole numbers above (140 MB); bytes are always whole.
  const digits = unit > 0 && value < 10 ? 1 : 0;
  const number = new Intl.NumberFormat(locale, {
    minimumFractionDigits: digits,
    maximumFractionDigits: digits,
  }).format(value);
  return `${number} ${byteUnits[unit]}`;
}

export function formatCount(count: number, locale?: string): string {
  return new Intl.NumberFormat(locale).format(count);
}

/** "22 Nov 2026, 10:04:03" in the browser's time zone. */
export function formatLocalTime(instant: Date, locale?: string, timeZone?: string): string {
  return new Intl.DateTimeFormat(locale, {
    dateStyle: 'medium',
    timeStyle: 'medium',
    ...(timeZone ? { timeZone } : {}),
  }).format(instant);
}

const steps: ReadonlyArray<[Intl.RelativeTimeFormatUnit, number]> = [
  ['second', 60],
  ['minute', 60],
  ['hour', 24],
  ['day', 30],
  ['month', 12],
  ['year', Number.POSITIVE_INFINITY],
];

/** "3 minutes ago", "in 2 hours", "now" (under 10 s either way), rounded down to whole units. */
export function formatAgo(instant: Date, now: Date, locale?: string): string {
  const seconds = (instant.getTime() - now.getTime()) / 1000;
  const format = new Intl.RelativeTimeFormat(locale, { numeric: 'auto' });
  if (Math.abs(seconds) < 10) return format.format(0, 'second');
  let value = seconds;
  for (const [unit, size] of steps) {
    if (Math.abs(value) < size) return format.format(Math.trunc(value), unit);
    value /= size;
  }
  return format.format(Math.trunc(value), 'year');
}

/** An API time (ISO 8601) or null as "local time (3 minutes ago)", or `none` when null. */
export function formatInstant(
  iso: string | null,
  now: Date,
  none: string,
  locale?: string,
): { text: string; ago?: string } {
  if (iso === null) return { text: none };
  const instant = new Date(iso);
  return { text: formatLocalTime(instant, locale), ago: formatAgo(instant, now, locale) };
}
