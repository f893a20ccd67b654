import { backoffDelay } from './backoff';

describe('backoffDelay', () => {
  const options = { initialMs: 100, maxMs: 5000 };

  it('when attempts grow, then the delay doubles around the base', () => {
    const middle = () => 0.5;
    expect([1, 2, 3, 4].map((attempt) => backoffDelay(options, attempt, middle))).toEqual([
      100, 200, 400, 800,
    ]);
  });

  it('when jitter is at its extremes, then the delay stays within +-20% and under maxMs', () => {
    expect(backoffDelay(options, 1, () => 0)).toBe(80);
    expect(backoffDelay(options, 1, () => 1)).toBe(120);
    expect(backoffDelay(options, 30, () => 1)).toBe(5000);
    expect(backoffDelay(options, 30, () => 0)).toBe(4000);
  });
});
