/** A quota: `limit` requests per `windowMs` (a whole number of seconds: the headers' `w`). */
export interface RateRule {
  limit: number;
  windowMs: number;
}

export interface RateDecision {
  allowed: boolean;
  /** Requests that may follow at once (the header's `r`). */
  remaining: number;
  /**
   * Whole seconds until the quota is whole again; on a refusal, until the next request is let
   * in, the same point as Retry-After (the header's `t`).
   */
  resetSeconds: number;
}

export interface RateLimiter {
  readonly rule: RateRule;
  /** Counts one request of `key` now, unless that would go past the rule. */
  take(key: string): RateDecision;
  /** Keys held now (bounded by maxKeys). */
  readonly size: number;
}

/** More keys than this per class: the one least recently seen is forgotten. */
export const DEFAULT_MAX_KEYS = 10_000;

/**
 * A leaky bucket used as a meter, the same arithmetic as GCRA: each key holds a level that
 * drains at `limit / windowMs` per millisecond, and a request adds 1 unless the level would pass
 * `limit`. Chosen over a fixed window, which lets 2 x limit through around a window's edge (the
 * end of one and the start of the next), and over a sliding log (memory per request): here a
 * key is two numbers and a request is O(1). A whole quota may still be spent at once (a producer
 * catching up after a pause), then it comes back steadily, one request per `windowMs / limit`.
 * Refused requests add nothing, so a client that waits its Retry-After gets in.
 *
 * Memory: the Map's insertion order is kept least recently seen first (a key is moved to the
 * end when seen); each call drops up to two drained keys from the front (a drained key is the
 * same as no key), and a new key past `maxKeys` evicts the front one, forgiving what it owed.
 */
export function createRateLimiter(
  rule: RateRule,
  options: { maxKeys?: number; now?: () => number } = {},
): RateLimiter {
  const maxKeys = options.maxKeys ?? DEFAULT_MAX_KEYS;
  const now = options.now ?? Date.now;
  const msPerRequest = rule.windowMs / rule.limit;
  const buckets = new Map<string, { level: number; at: number }>();
  const levelAt = (bucket: { level: number; at: number }, time: number) =>
    Math.max(0, bucket.level - (time - bucket.at) / msPerRequest);

  return {
    rule,
    get size() {
      return buckets.size;
    },
    take(key) {
      const time = now();
      dropDrained(time);
      const held = buckets.get(key);
      const level = held ? levelAt(held, time) : 0;
      if (held) buckets.delete(key);
      else if (buckets.size >= maxKeys) {
        const oldest = buckets.keys().next();
        if (!oldest.done) buckets.delete(oldest.value);
      }
      const allowed = level + 1 <= rule.limit;
      const after = allowed ? level + 1 : level;
      buckets.set(key, { level: after, at: time });
      // Refused: the wait until the level has drained enough for one more request.
      const waitMs = (allowed ? after : after + 1 - rule.limit) * msPerRequest;
      return {
        allowed,
        remaining: Math.max(0, Math.floor(rule.limit - after)),
        resetSeconds: allowed ? wholeSeconds(waitMs) : Math.max(1, wholeSeconds(waitMs)),
      };
    },
  };

  function dropDrained(time: number): void {
    for (let i = 0; i < 2; i++) {
      const first = buckets.entries().next();
      if (first.done || levelAt(first.value[1], time) > 0) return;
      buckets.delete(first.value[0]);
    }
  }
}

/** Rounded up, but not past float noise: 12000.000001 ms is 12 s. */
function wholeSeconds(ms: number): number {
  return Math.max(0, Math.ceil(ms / 1000 - 1e-6));
}

/**
 * The IETF draft's fields as draft-ietf-httpapi-ratelimit-headers-08 (October 2024) writes them
 * (structured-field Lists of Items whose value is a String naming the policy, sections 3 and 4),
 * as express-rate-limit's `standardHeaders: 'draft-8'` prints them, without its optional `pk`:
 * the partition (a token id, or an address) is the caller itself, documented in the README.
 * `w` is whole seconds (section 3.1.3: no sub-second precision).
 */
export function rateLimitHeaders(
  policy: string,
  rule: RateRule,
  decision: RateDecision,
): Record<string, string> {
  return {
    'RateLimit-Policy': `"${policy}";q=${rule.limit};w=${Math.round(rule.windowMs / 1000)}`,
    RateLimit: `"${policy}";r=${decision.remaining};t=${decision.resetSeconds}`,
  };
}
