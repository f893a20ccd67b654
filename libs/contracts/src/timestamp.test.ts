import {
  daysInMonth,
  isStorableTimestamp,
  MAX_STORABLE_TIMESTAMP_MS,
  parseDateTime,
} from './timestamp';

describe('isStorableTimestamp', () => {
  it('when a timestamp has a 4-digit year, whatever its offset, then every store can take it', () => {
    for (const value of [
      '0000-01-01T00:00:00+23:59',
      '1970-01-01T00:00:00Z',
      '2026-11-22T10:15:30.123456789Z',
      '9999-12-31T23:59:59.999-23:59',
    ]) {
      expect(isStorableTimestamp(parseDateTime(value))).toBe(true);
    }
  });

  it('when a date lies beyond 2^48 ms of the epoch, or is invalid, then it cannot be stored', () => {
    expect(isStorableTimestamp(new Date(MAX_STORABLE_TIMESTAMP_MS - 1))).toBe(true);
    expect(isStorableTimestamp(new Date(MAX_STORABLE_TIMESTAMP_MS))).toBe(false);
    expect(isStorableTimestamp(new Date(-MAX_STORABLE_TIMESTAMP_MS))).toBe(false);
    expect(isStorableTimestamp(new Date(8.64e15))).toBe(false);
    expect(isStorableTimestamp(new Date(Number.NaN))).toBe(false);
  });
});

describe('daysInMonth', () => {
  it("when every month of the years 0 to 9999 is counted, then it agrees with Date's calendar", () => {
    const disagreements: string[] = [];
    for (let year = 0; year <= 9999; year++) {
      for (let month = 1; month <= 12; month++) {
        const utc = new Date(0);
        utc.setUTCFullYear(year, month, 0); // day 0 of the next month: the month's last day
        if (daysInMonth(year, month) !== utc.getUTCDate()) disagreements.push(`${year}-${month}`);
      }
    }
    expect(disagreements).toEqual([]);
  });
});
