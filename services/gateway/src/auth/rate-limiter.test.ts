import { createRateLimiter, rateLimitHeaders } from './rate-limiter';

/** A clock the test moves by hand. */
function manualClock(start = 1_000_000) {
  let time = start;
  return { now: () => time, advance: (ms: number) => void (time += ms) };
}

const fivePerMinute = { limit: 5, windowMs: 60_000 };

describe('createRateLimiter', () => {
  it('when a key spends its whole quota at once, then the next request is refused until one request has drained (window / limit)', () => {
    const clock = manualClock();
    const limiter = createRateLimiter(fivePerMinute, { now: clock.now });
    const taken = Array.from({ length: 5 }, () => limiter.take('tok'));
    expect(taken.map((d) => [d.allowed, d.remaining])).toEqual([
      [true, 4],
      [true, 3],
      [true, 2],
      [true, 1],
      [true, 0],
    ]);
    expect(limiter.take('tok')).toEqual({ allowed: false, remaining: 0, resetSeconds: 12 });
    clock.advance(11_999);
    expect(limiter.take('tok').allowed).toBe(false);
    clock.advance(1);
    expect(limiter.take('tok')).toMatchObject({ allowed: true, remaining: 0 });
    expect(limiter.take('tok').allowed).toBe(false);
  });

  it('when a window passes at a fixed window edge, then no second burst gets through (it refills steadily)', () => {
    const clock = manualClock();
    const limiter = createRateLimiter(fivePerMinute, { now: clock.now });
    clock.advance(59_000);
    for (let i = 0; i < 5; i++) expect(limiter.take('tok').allowed).toBe(true);
    // A fixed window starting at 60 s would allow 5 more here; drained: 2 s / 12 s = 0.17.
    clock.advance(2_000);
    expect(limiter.take('tok').allowed).toBe(false);
  });

  it('when requests are refused, then they spend nothing: waiting Retry-After is enough', () => {
    const clock = manualClock();
    const limiter = createRateLimiter(fivePerMinute, { now: clock.now });
    for (let i = 0; i < 5; i++) limiter.take('tok');
    for (let i = 0; i < 100; i++) expect(limiter.take('tok').allowed).toBe(false);
    clock.advance(12_000);
    expect(limiter.take('tok').allowed).toBe(true);
  });

  it('when a key was idle for a whole window, then its full quota is back and reset is 0 before any request', () => {
    const clock = manualClock();
    const limiter = createRateLimiter(fivePerMinute, { now: clock.now });
    for (let i = 0; i < 5; i++) limiter.take('tok');
    clock.advance(60_000);
    // One request: 4 left, the quota whole again in 12 s.
    expect(limiter.take('tok')).toEqual({ allowed: true, remaining: 4, resetSeconds: 12 });
  });

  it('when two keys share a limiter, then one spending its quota leaves the other untouched', () => {
    const limiter = createRateLimiter(fivePerMinute, { now: manualClock().now });
    for (let i = 0; i < 6; i++) limiter.take('a');
    expect(limiter.take('b')).toMatchObject({ allowed: true, remaining: 4 });
  });

  it('when a limit does not divide its window, then exactly the limit passes in a burst', () => {
    const limiter = createRateLimiter({ limit: 7, windowMs: 60_000 }, { now: manualClock().now });
    const allowed = Array.from({ length: 10 }, () => limiter.take('k').allowed);
    expect(allowed.filter(Boolean)).toHaveLength(7);
  });

  it('when more keys than maxKeys are seen, then the least recently seen one is forgotten', () => {
    const clock = manualClock();
    const limiter = createRateLimiter(fivePerMinute, { now: clock.now, maxKeys: 3 });
    for (let i = 0; i < 5; i++) limiter.take('old');
    limiter.take('b');
    limiter.take('c');
    limiter.take('b'); // b is now more recent than c
    limiter.take('d'); // evicts 'old', the least recently seen
    expect(limiter.size).toBe(3);
    expect(limiter.take('old').allowed).toBe(true); // forgotten: its debt forgiven
    expect(limiter.size).toBe(3); // and 'c' went in its place
  });

  it('when keys have drained, then they are dropped as others are seen (memory follows activity)', () => {
    const clock = manualClock();
    const limiter = createRateLimiter(fivePerMinute, { now: clock.now });
    for (let i = 0; i < 100; i++) limiter.take(`peer-${i}`);
    expect(limiter.size).toBe(100);
    clock.advance(12_000); // one request each: drained
    for (let i = 0; i < 60; i++) limiter.take('busy');
    expect(limiter.size).toBe(1);
  });
});

describe('rateLimitHeaders', () => {
  it('when a decision is written, then the fields have the draft-08 structured-field form', () => {
    expect(
      rateLimitHeaders(
        'ingest',
        { limit: 600, windowMs: 60_000 },
        { allowed: false, remaining: 0, resetSeconds: 12 },
      ),
    ).toEqual({ 'RateLimit-Policy': '"ingest";q=600;w=60', RateLimit: '"ingest";r=0;t=12' });
  });
});
