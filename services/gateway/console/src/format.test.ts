import { formatAgo, formatBytes, formatCount, formatLocalTime } from './format';

describe('formatBytes', () => {
  it.each([
    [0, '0 B'],
    [999, '999 B'],
    [1000, '1.0 kB'],
    [1_048_576, '1.0 MB'],
    [14_200_000, '14 MB'],
    [1_099_511_627_776, '1.1 TB'],
    [2_500_000_000, '2.5 GB'],
    [999_999_999, '1,000 MB'],
  ])('when %d bytes, then "%s"', (bytes, text) => {
    expect(formatBytes(bytes, 'en-US')).toBe(text);
  });
});

describe('formatAgo', () => {
  const now = new Date('2026-11-22T10:00:00Z');
  const before = (ms: number) => new Date(now.getTime() - ms);
  it.each([
    [before(3_000), 'now'],
    [before(45_000), '45 seconds ago'],
    [before(3 * 60_000 + 20_000), '3 minutes ago'],
    [before(60 * 60_000), '1 hour ago'],
    [before(26 * 3_600_000), 'yesterday'],
    [before(5 * 86_400_000), '5 days ago'],
    [before(400 * 86_400_000), 'last year'],
    [new Date(now.getTime() + 2 * 3_600_000 + 5_000), 'in 2 hours'],
  ])('when %s, then "%s"', (instant, text) => {
    expect(formatAgo(instant, now, 'en-US')).toBe(text);
  });
});

describe('formatLocalTime and formatCount', () => {
  it('when given an instant and a zone, then it reads as that local time', () => {
    const instant = new Date('2026-11-22T10:04:03Z');
    expect(formatLocalTime(instant, 'en-GB', 'Asia/Singapore')).toBe('22 Nov 2026, 18:04:03');
  });

  it('when given a count, then it is grouped', () => {
    expect(formatCount(1234567, 'en-US')).toBe('1,234,567');
  });
});
