/**
 * JSON with Dates kept as Dates: a Date is written as `{"$date": "<ISO 8601>"}` (null for an
 * invalid Date) and read back as a Date wherever it sits, so a field added to a document later
 * round-trips with no change here. An object of exactly that shape is read as a Date; the stored
 * documents have none.
 */
export function toJson(value: unknown): string {
  return JSON.stringify(value, function (this: Record<string, unknown>, key, encoded: unknown) {
    // `encoded` is already Date.prototype.toJSON's ISO string; `this[key]` is the Date itself.
    return this[key] instanceof Date ? { $date: encoded } : encoded;
  });
}

export function fromJson<T>(text: string): T {
  return JSON.parse(text, (_key, value: unknown) => {
    if (isTaggedDate(value)) return new Date(value.$date ?? Number.NaN);
    return value;
  }) as T;
}

function isTaggedDate(value: unknown): value is { $date: string | null } {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const keys = Object.keys(value);
  if (keys.length !== 1 || keys[0] !== '$date') return false;
  const date = (value as { $date: unknown }).$date;
  return typeof date === 'string' || date === null;
}
