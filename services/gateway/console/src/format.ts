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

const numberFormats = new Map<string, Intl.NumberFormat>();

export function formatCount(count: number, locale?: string): string {
  let format = numberFormats.get(locale ?? '');
  if (!format) numberFormats.set(locale ?? '', (format = new Intl.NumberFormat(locale)));
  return format.format(count);
}

/** A share (0..1) as a whole percent, "37 %" style per locale; below 1 % but above 0: "<1 %". */
const percentFormats = new Map<string, Intl.NumberFormat>();

export function formatShare(share: number, locale?: string): string {
  let format = percentFormats.get(locale ?? '');
  if (!format) {
    format = new Intl.NumberFormat(locale, { style: 'percent', maximumFractionDigits: 0 });
    percentFormats.set(locale ?? '', format);
  }
  if (share > 0 && share < 0.01) return `<${format.format(0.01)}`;
  return format.format(share);
}

/**
 * One formatter per kind and locale: building an Intl formatter costs far more than using it,
 * and the Fleet view formats a few thousand times per render.
 */
const formatters = new Map<string, Intl.DateTimeFormat | Intl.RelativeTimeFormat>();
function cached<T extends Intl.DateTimeFormat | Intl.RelativeTimeFormat>(
  key: string,
  make: () => T,
): T {
  let formatter = formatters.get(key) as T | undefined;
  if (!formatter) formatters.set(key, (formatter = make()));
  return formatter;
}

const dateTimeFormat = (
  kind: string,
  options: Intl.DateTimeFormatOptions,
  locale?: string,
  timeZone?: string,
) =>
  cached(
    `${kind}|${locale ?? ''}|${timeZone ?? ''}`,
    () => new Intl.DateTimeFormat(locale, { ...options, ...(timeZone ? { timeZone } : {}) }),
  );

/** "22 Nov 2026, 10:04:03" in the browser's time zone. */
export function formatLocalTime(instant: Date, locale?: string, timeZone?: string): string {
  return dateTimeFormat(
    'time',
    { dateStyle: 'medium', timeStyle: 'medium' },
    locale,
    timeZone,
  ).format(instant);
}

/** A timeline's hour, "14:00", in the browser's time zone. */
export function formatHour(instant: Date, locale?: string, timeZone?: string): string {
  return dateTimeFormat('hour', { hour: '2-digit', minute: '2-digit' }, locale, timeZone).format(
    instant,
  );
}

/** A timeline's day, "Nov 26", in the browser's time zone. */
export function formatDay(instant: Date, locale?: string, timeZone?: string): string {
  return dateTimeFormat('day', { month: 'short', day: 'numeric' }, locale, timeZone).format(
    instant,
  );
}

const steps: ReadonlyArray<[Intl.RelativeTimeFormatUnit, number]> = [
  ['second', 60],
  ['minute', 60],
  ['hour', 24],
  ['day', 30],
  ['month', 12],
  ['year', Number.POSITIVE_INFINITY],
];

/**
 * The words of each (locale, unit, amount) once: a fleet of 1,000 devices has a few dozen
 * distinct "n minutes ago", and the formatter is slow enough to show in its render.
 */
const agoWords = new Map<string, string>();
function relative(amount: number, unit: Intl.RelativeTimeFormatUnit, locale?: string): string {
  const key = `${locale ?? ''}|${unit}|${amount}`;
  let words = agoWords.get(key);
  if (words === undefined) {
    const format = cached(
      `ago|${locale ?? ''}`,
      () => new Intl.RelativeTimeFormat(locale, { numeric: 'auto' }),
    );
    words = format.format(amount, unit);
    if (agoWords.size > 5_000) agoWords.clear(); // bounded: a page left open for weeks
    agoWords.set(key, words);
  }
  return words;
}

/** "3 minutes ago", "in 2 hours", "now" (under 10 s either way), rounded down to whole units. */
export function formatAgo(instant: Date, now: Date, locale?: string): string {
  const seconds = (instant.getTime() - now.getTime()) / 1000;
  if (Math.abs(seconds) < 10) return relative(0, 'second', locale);
  let value = seconds;
  for (const [unit, size] of steps) {
    if (Math.abs(value) < size) return relative(Math.trunc(value), unit, locale);
    value /= size;
  }
  return relative(Math.trunc(value), 'year', locale);
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
