import { expiredFor } from './operator-listing';

describe('a listing going stale', () => {
  const cacheInfo = { expires_at: '2026-11-22T10:00:30.000Z' };

  it('when its snapshot has not expired, then it is fresh', () => {
    expect(expiredFor(cacheInfo, new Date('2026-11-22T10:00:29.999Z'))).toBeUndefined();
  });

  it('when its snapshot has expired, then it says how long ago', () => {
    expect(expiredFor(cacheInfo, new Date('2026-11-22T10:00:30.000Z'))).toBe(0);
    expect(expiredFor(cacheInfo, new Date('2026-11-22T10:01:00.000Z'))).toBe(30_000);
  });
});
