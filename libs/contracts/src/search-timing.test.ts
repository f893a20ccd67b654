import { searchTimings } from './search-timing';

describe('searchTimings', () => {
  it.each([100, 1500, 10_000, 120_000])(
    'when the gateway waits %i ms, then queue, budget and grace add up to it, the budget the most',
    (timeoutMs) => {
      const { expirationMs, budgetMs, graceMs } = searchTimings(timeoutMs);
      expect(expirationMs + budgetMs + graceMs).toBe(timeoutMs);
      expect(budgetMs).toBeGreaterThan(expirationMs);
      expect(graceMs).toBeLessThanOrEqual(1000);
    },
  );

  it('when a wait is short, then the answer still has 200 ms to come back, or a quarter of it', () => {
    expect(searchTimings(1000)).toEqual({ expirationMs: 200, budgetMs: 600, graceMs: 200 });
    expect(searchTimings(400)).toEqual({ expirationMs: 80, budgetMs: 220, graceMs: 100 });
  });

  it('when the default 10 s is split, then a search may run 7 s', () => {
    expect(searchTimings(10_000)).toEqual({ expirationMs: 2000, budgetMs: 7000, graceMs: 1000 });
  });
});
