import { msUntilExpiry } from './operator-listing';

describe('a listing going stale', () => {
  const cacheInfo = { expires_at: '2026-11-22T10:00:30.000Z' };

  it('when its snapshot has not expired, then the time left is positive', () => {
    expect(msUntilExpiry(cacheInfo, new Date('2026-11-22T10:00:29.999Z'))).toBe(1);
  });

  it('when its snapshot has expired, then the time left is zero or less', () => {
    expect(msUntilExpiry(cacheInfo, new Date('2026-11-22T10:00:30.000Z'))).toBe(0);
    expect(msUntilExpiry(cacheInfo, new Date('2026-11-22T10:01:00.000Z'))).toBe(-30_000);
  });
});
