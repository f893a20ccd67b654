import {
  createRateLimits,
  parseRateLimits,
  parseRateRule,
  peerKey,
  routeClassOf,
} from './rate-limits';
import { gatewayConfigSpec as spec } from '../config';

const texts = {
  ingest: '6000/1m',
  search: '600/1m',
  operator: '600/60s',
  archive: '120/m',
  admin: 'off',
  unauthenticated: '0',
};

describe('parseRateRule', () => {
  it.each([
    ['6000/1m', { limit: 6000, windowMs: 60_000 }],
    ['5/1s', { limit: 5, windowMs: 1000 }],
    [' 100 / 2h ', { limit: 100, windowMs: 7_200_000 }],
    ['10/m', { limit: 10, windowMs: 60_000 }],
    ['off', null],
    ['0', null],
  ])('when the text is %s, then the rule is read', (text, rule) => {
    expect(parseRateRule(text)).toEqual(rule);
  });

  it.each(['600', '600/500ms', '600/0s', '600/25h', '0/1m', '2000000/1m', '1.5/1m', 'many/1m', ''])(
    'when the text is "%s", then it is refused',
    (text) => {
      expect(parseRateRule(text)).toBeUndefined();
    },
  );
});

describe('parseRateLimits', () => {
  it('when every variable is good, then classes set to 0 or off have no rule', () => {
    expect(parseRateLimits(texts)).toEqual({
      ingest: { limit: 6000, windowMs: 60_000 },
      search: { limit: 600, windowMs: 60_000 },
      operator: { limit: 600, windowMs: 60_000 },
      archive: { limit: 120, windowMs: 60_000 },
    });
  });

  it('when variables are bad, then one error names each with its value and the rule', () => {
    expect(() => parseRateLimits({ ...texts, search: '600', admin: '5/500ms' })).toThrow(
      /GATEWAY_RATE_LIMIT_SEARCH=600 \(<requests>\/<window>.*\)\nGATEWAY_RATE_LIMIT_ADMIN=5\/500ms/,
    );
  });
});

describe('routeClassOf', () => {
  it('when a route asks a scope, then its class follows it; no scope is admin', () => {
    expect(routeClassOf('ingest')).toBe('ingest');
    expect(routeClassOf('search')).toBe('search');
    expect(routeClassOf('operator')).toBe('operator');
    expect(routeClassOf('archive:read')).toBe('archive');
    expect(routeClassOf('archive:write')).toBe('archive');
    expect(routeClassOf('data:delete')).toBe('archive');
    expect(routeClassOf('metrics')).toBe('admin');
    expect(routeClassOf(undefined)).toBe('admin');
  });
});

describe('createRateLimits', () => {
  it('when a class has no rule, then it is not counted; classes are counted apart', () => {
    const limits = createRateLimits({ ingest: { limit: 1, windowMs: 60_000 } });
    expect(limits.check('search', 'tok')).toBeUndefined();
    expect(limits.check('ingest', 'tok')).toMatchObject({ allowed: true, routeClass: 'ingest' });
    expect(limits.check('ingest', 'tok')).toMatchObject({ allowed: false, resetSeconds: 60 });
  });
});

describe('per-token rules', () => {
  const own = { limit: 2, windowMs: 60_000 };

  it("when a token carries its own rule for a class, then it is counted by that rule, not the class's", () => {
    const limits = createRateLimits({ ingest: { limit: 100, windowMs: 60_000 } });
    expect(limits.check('ingest', 'tok_a', own)).toMatchObject({ allowed: true, rule: own });
    expect(limits.check('ingest', 'tok_a', own)).toMatchObject({ allowed: true, remaining: 0 });
    expect(limits.check('ingest', 'tok_a', own)).toMatchObject({
      allowed: false,
      resetSeconds: 30,
    });
    // Another token without a rule of its own has the class's.
    expect(limits.check('ingest', 'tok_b')).toMatchObject({ allowed: true, remaining: 99 });
  });

  it("when a class has no rule of the gateway, then a token's own rule still limits it", () => {
    const limits = createRateLimits({});
    expect(limits.check('search', 'tok_a')).toBeUndefined();
    expect(limits.check('search', 'tok_a', { limit: 1, windowMs: 1000 })).toMatchObject({
      allowed: true,
    });
    expect(limits.check('search', 'tok_a', { limit: 1, windowMs: 1000 })).toMatchObject({
      allowed: false,
    });
  });

  it('when two tokens share a rule, or one token has the same rule in two classes, then each count is its own', () => {
    const limits = createRateLimits({});
    limits.check('ingest', 'tok_a', own);
    limits.check('ingest', 'tok_a', own);
    expect(limits.check('ingest', 'tok_b', own)).toMatchObject({ allowed: true, remaining: 1 });
    expect(limits.check('search', 'tok_a', own)).toMatchObject({ allowed: true, remaining: 1 });
  });

  it('when more distinct rules are used than held, then the least recently used one is forgotten', () => {
    const limits = createRateLimits({}, { maxTokenRules: 2 });
    const rule = (limit: number) => ({ limit, windowMs: 60_000 });
    limits.check('ingest', 'tok_a', rule(1));
    limits.check('ingest', 'tok_b', rule(2));
    limits.check('ingest', 'tok_b', rule(2));
    limits.check('ingest', 'tok_c', rule(3)); // rule(1) is forgotten, rule(2) held
    expect(limits.check('ingest', 'tok_b', rule(2))).toMatchObject({ allowed: false });
    expect(limits.check('ingest', 'tok_a', rule(1))).toMatchObject({ allowed: true });
  });
});

describe('peerKey', () => {
  it.each([
    ['192.0.2.7', '192.0.2.7'],
    ['::ffff:192.0.2.7', '192.0.2.7'],
    ['2001:db8:1:2:3:4:5:6', '2001:db8:1:2::/64'],
    ['2001:db8:1:2:ffff::1', '2001:db8:1:2::/64'],
    ['2001:db8::1', '2001:db8:0:0::/64'],
    ['::1', '0:0:0:0::/64'],
    ['fe80::1%eth0', 'fe80:0:0:0::/64'],
    [undefined, 'unknown'],
  ])('when the peer is %s, then its key is %s', (address, key) => {
    expect(peerKey(address)).toBe(key);
  });
});

describe('the defaults', () => {
  it('when the gateway runs on its defaults, then every class has a rule, ingest the loosest', () => {
    const rules = parseRateLimits({
      ingest: spec.rateLimitIngest.default,
      search: spec.rateLimitSearch.default,
      operator: spec.rateLimitOperator.default,
      archive: spec.rateLimitArchive.default,
      admin: spec.rateLimitAdmin.default,
      unauthenticated: spec.rateLimitUnauthenticated.default,
    });
    expect(rules).toEqual({
      ingest: { limit: 60_000, windowMs: 60_000 },
      search: { limit: 600, windowMs: 60_000 },
      operator: { limit: 600, windowMs: 60_000 },
      archive: { limit: 600, windowMs: 60_000 },
      admin: { limit: 600, windowMs: 60_000 },
      unauthenticated: { limit: 60, windowMs: 60_000 },
    });
  });
});
