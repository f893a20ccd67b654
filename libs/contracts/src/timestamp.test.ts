import { isStorableTimestamp, MAX_STORABLE_TIMESTAMP_MS, parseDateTime } from './timestamp';

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
