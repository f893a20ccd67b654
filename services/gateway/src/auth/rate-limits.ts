import { createRateLimiter, type RateLimiter, type RateRule } from './rate-limiter';
import type { Scope } from './tokens';

export const routeClasses = [
  'ingest',
  'search',
  'operator',
  'archive',
  'admin',
  'unauthenticated',
] as const;
export type RouteClass = (typeof routeClasses)[number];

/**
 * The class a route is counted in, from the scope it asks. The archive and the deletes share
 * one (the same worker does them, and both are rare); `metrics` and routes that ask no scope
 * (GET /auth/whoami) are 'admin', as token administration and the audit trail are. 'unauthenticated' is for requests without a valid token.
 */
export function routeClassOf(scope: Scope | undefined): Exclude<RouteClass, 'unauthenticated'> {
  switch (scope) {
    case 'ingest':
    case 'search':
    case 'operator':
      return scope;
    case 'archive:read':
    case 'archive:write':
    case 'data:delete':
      return 'archive';
    case 'metrics':
    case 'tokens:admin':
    case 'audit:read':
    case undefined:
      return 'admin';
  }
}

export interface RateLimitCheck {
  /** Whether to answer: false = 429. */
  allowed: boolean;
  routeClass: RouteClass;
  rule: RateRule;
  remaining: number;
  resetSeconds: number;
}

/**
 * One limiter per class, counted in this gateway's memory (ADR 0019: limits are per gateway).
 * A class without a rule is not limited. A token may carry its own rule for a class (ADR 0019:
 * "a token may carry its own limits"): the caller that knows the token passes it, and it is
 * counted by a limiter for that class and rule, shared by every token with the same rule (each
 * token still has its own count in it, by its key).
 */
export interface RateLimits {
  check(routeClass: RouteClass, key: string, rule?: RateRule): RateLimitCheck | undefined;
}

/**
 * More distinct per-token rules than this held at once: the least recently used one's limiter is
 * forgotten (and what its tokens owed with it). Tokens are made by people, so a fleet has a few
 * rules; the bound is for a store that hands out a rule per token.
 */
export const MAX_TOKEN_RULES = 1000;

export function createRateLimits(
  rules: Partial<Record<RouteClass, RateRule>>,
  options: { maxKeys?: number; maxTokenRules?: number; now?: () => number } = {},
): RateLimits {
  const limiters = new Map<RouteClass, RateLimiter>();
  for (const routeClass of routeClasses) {
    const rule = rules[routeClass];
    if (rule) limiters.set(routeClass, createRateLimiter(rule, options));
  }
  const maxTokenRules = options.maxTokenRules ?? MAX_TOKEN_RULES;
  // By class and rule, least recently used first: one class's count never spends another's.
  const tokenLimiters = new Map<string, RateLimiter>();
  const tokenLimiter = (routeClass: RouteClass, rule: RateRule): RateLimiter => {
    const name = `${routeClass} ${rule.limit}/${rule.windowMs}`;
    let limiter = tokenLimiters.get(name);
    if (limiter) tokenLimiters.delete(name);
    else {
      limiter = createRateLimiter(rule, options);
      if (tokenLimiters.size >= maxTokenRules) {
        const oldest = tokenLimiters.keys().next();
        if (!oldest.done) tokenLimiters.delete(oldest.value);
      }
    }
    tokenLimiters.set(name, limiter);
    return limiter;
  };
  return {
    check(routeClass, key, rule) {
      const limiter = rule ? tokenLimiter(routeClass, rule) : limiters.get(routeClass);
      if (!limiter) return undefined;
      return { routeClass, rule: limiter.rule, ...limiter.take(key) };
    },
  };
}

/** The config's variable of each class (config.ts), for start-up errors. */
export const rateLimitVariables: Record<RouteClass, string> = {
  ingest: 'GATEWAY_RATE_LIMIT_INGEST',
  search: 'GATEWAY_RATE_LIMIT_SEARCH',
  operator: 'GATEWAY_RATE_LIMIT_OPERATOR',
  archive: 'GATEWAY_RATE_LIMIT_ARCHIVE',
  admin: 'GATEWAY_RATE_LIMIT_ADMIN',
  unauthenticated: 'GATEWAY_RATE_LIMIT_UNAUTHENTICATED',
};

export const RATE_RULE_SYNTAX =
  '<requests>/<window>, e.g. 600/1m: requests 1 to 1000000, window a whole number of seconds from 1s to 24h (s, m or h), or 0 / off for no limit';

const units: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000 };

/** `600/1m` -> {limit 600, windowMs 60000}; `0` or `off` -> null (no limit); else undefined. */
export function parseRateRule(text: string): RateRule | null | undefined {
  const value = text.trim().toLowerCase();
  if (value === '0' || value === 'off') return null;
  const match = /^(\d{1,7})\s*\/\s*(\d{1,5})?\s*(s|m|h)$/.exec(value);
  if (!match?.[1] || !match[3]) return undefined;
  const limit = Number(match[1]);
  const windowMs = Number(match[2] ?? '1') * (units[match[3]] ?? NaN);
  if (limit < 1 || limit > 1_000_000) return undefined;
  if (!(windowMs >= 1000 && windowMs <= 86_400_000)) return undefined;
  return { limit, windowMs };
}

/**
 * Every class's rule from its variable's text; one error naming each bad variable, its value
 * and the rule, so the gateway does not start half-limited.
 */
export function parseRateLimits(
  texts: Record<RouteClass, string>,
): Partial<Record<RouteClass, RateRule>> {
  const rules: Partial<Record<RouteClass, RateRule>> = {};
  const bad: string[] = [];
  for (const routeClass of routeClasses) {
    const rule = parseRateRule(texts[routeClass]);
    if (rule === undefined)
      bad.push(`${rateLimitVariables[routeClass]}=${texts[routeClass]} (${RATE_RULE_SYNTAX})`);
    else if (rule) rules[routeClass] = rule;
  }
  if (bad.length > 0) throw new Error(`invalid rate limits:\n${bad.join('\n')}`);
  return rules;
}

/**
 * The key of a request without a valid token: its peer address, an IPv6 one cut to its /64
 * (one host or home network usually holds a whole /64, so a key per address would let it
 * rotate through billions of them). An IPv4-mapped IPv6 address is its IPv4 address.
 */
export function peerKey(address: string | undefined): string {
  if (!address) return 'unknown';
  const bare = address.split('%')[0] ?? address;
  const mapped = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i.exec(bare);
  if (mapped?.[1]) return mapped[1];
  if (!bare.includes(':')) return bare;
  const [head = '', tail] = bare.split('::');
  const front = head ? head.split(':') : [];
  const back = tail ? tail.split(':') : [];
  const groups =
    tail === undefined
      ? front
      : [
          ...front,
          ...Array<string>(Math.max(0, 8 - front.length - back.length)).fill('0'),
          ...back,
        ];
  const prefix = groups.slice(0, 4).map((group) => parseInt(group, 16).toString(16));
  return `${prefix.join(':')}::/64`;
}
