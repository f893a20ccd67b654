import { AppError, secretHash, type HeldToken } from '@screenfleet/contracts';
import type { Logger } from '@screenfleet/runtime';
import { staticGrants, type TokenEntry, type TokenGrant, type TokenRegistry } from './tokens';

/** A token's latest use, as tokens.request `used` carries it. */
export interface TokenUse {
  id: string;
  at_ms: number;
}

/** Where the stored tokens come from and where their uses go (tokens-rpc.client.ts). */
export interface StoredTokens {
  snapshot(): Promise<HeldToken[]>;
  recordUses(uses: TokenUse[]): Promise<void>;
}

/** What the cache reports; metrics.ts's `tokens` fits it (the cache never imports prom-client). */
export interface TokenCacheObserver {
  /** A snapshot load ended: `ok`, or the code of the error it failed with (bounded). */
  snapshotLoaded(result: string): void;
}

/**
 * The gateway's view of every token (ADR 0019): the configured ones (GATEWAY_TOKENS or the local
 * token) and the stored ones, from the last snapshot of tokens.rpc. A TokenRegistry for
 * authenticate.ts; refresh() is what the tokens.changed events, reconnects and the backstop
 * timer call.
 */
export interface TokenCache extends TokenRegistry {
  /**
   * Loads a snapshot. Coalesced: at most one load in flight and one queued behind it, which every
   * call made meanwhile shares (a burst of changes costs two loads). Never rejects: a failed load
   * keeps the last snapshot (fail static).
   */
  refresh: () => Promise<void>;
  /** First load in the background, retried with backoff until one succeeds; timers. Returns at once. */
  start(): void;
  /** Stops the timers and the retries; reports the uses not yet reported. */
  stop(): Promise<void>;
  /** Reports the uses seen since a token's last report, for tokens reported a minute ago or more. */
  flushUses(options?: { all?: boolean }): Promise<void>;
  /** Stored tokens held (the configured ones not counted). */
  readonly storedSize: number;
  /** Since the last successful load; undefined before the first. */
  snapshotAgeMs(): number | undefined;
}

export interface TokenCacheOptions {
  /** The backstop for a lost event (ADR 0019: every 30 s). */
  refreshMs?: number;
  /** A stored token's use is reported at most this often (ADR 0019: once a minute). */
  usesEveryMs?: number;
  /** Waits between failed first loads: doubling from initialMs up to maxMs. */
  firstLoadRetry?: { initialMs: number; maxMs: number };
  now?: () => number;
}

interface Held {
  grant: TokenGrant;
  /** Stored (its uses are reported), not configured. */
  stored: boolean;
}

/** tokens.request `used` takes at most this many uses (its schema's maxItems). */
const MAX_USES_PER_REPORT = 10_000;

export function createTokenCache(deps: {
  staticTokens: readonly TokenEntry[];
  store: StoredTokens;
  logger: Logger;
  observer?: TokenCacheObserver;
  options?: TokenCacheOptions;
}): TokenCache {
  const logger = deps.logger.child({ component: 'token-cache' });
  const {
    refreshMs = 30_000,
    usesEveryMs = 60_000,
    firstLoadRetry = { initialMs: 250, maxMs: 5000 },
    now = Date.now,
  } = deps.options ?? {};
  const statics = new Map(
    [...staticGrants(deps.staticTokens)].map(([hash, grant]) => [hash, { grant, stored: false }]),
  );
  let held = new Map<string, Held>(statics);
  let storedSize = 0;
  let loadedAtMs: number | undefined;
  let inFlight: Promise<void> | undefined;
  let queued: Promise<void> | undefined;
  // Uses not reported yet (the latest per token), and when each token was last reported.
  const pendingUses = new Map<string, number>();
  const reportedAt = new Map<string, number>();
  let stopped = false;
  let timers: NodeJS.Timeout[] = [];
  let wake: (() => void) | undefined;

  const install = (tokens: HeldToken[]): void => {
    const next = new Map<string, Held>();
    for (const token of tokens)
      next.set(token.secret_hash, { grant: grantOf(token), stored: true });
    // A configured token wins over a stored copy of it (`tokens import`): it keeps working as
    // configured until the variable is emptied.
    for (const [hash, entry] of statics) next.set(hash, entry);
    held = next;
    storedSize = tokens.length;
    loadedAtMs = now();
    // Forget revoked tokens' report times, so the map stays as large as the store's list.
    const ids = new Set(tokens.map((token) => token.id));
    for (const id of reportedAt.keys()) if (!ids.has(id)) reportedAt.delete(id);
  };

  // Failed loads in a row: the first is a warning, the rest debug (a gateway with no ingest
  // worker running retries every few seconds), the first success after them info.
  let failures = 0;
  const load = async (): Promise<void> => {
    try {
      const tokens = await deps.store.snapshot();
      install(tokens);
      deps.observer?.snapshotLoaded('ok');
      const level = failures > 0 ? 'info' : 'debug';
      logger[level]({ tokens: tokens.length, failures }, 'loaded the stored tokens');
      failures = 0;
    } catch (error) {
      deps.observer?.snapshotLoaded(error instanceof AppError ? error.code : 'error');
      failures += 1;
      const level = failures === 1 ? 'warn' : 'debug';
      if (loadedAtMs === undefined)
        logger[level](
          { err: error, failures },
          'cannot load the stored tokens yet: only configured tokens are accepted, others get 503',
        );
      else
        logger[level](
          { err: error, failures },
          'cannot load the stored tokens: keeping the last snapshot',
        );
    }
  };

  const refresh = (): Promise<void> => {
    if (!inFlight) {
      inFlight = load().finally(() => {
        inFlight = undefined;
      });
      return inFlight;
    }
    // Registered after the in-flight load's own clean-up, so it starts a load of its own.
    queued ??= inFlight.then(() => {
      queued = undefined;
      return refresh();
    });
    return queued;
  };

  const pause = (ms: number) =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms);
      wake = () => {
        clearTimeout(timer);
        resolve();
      };
    });

  const firstLoad = async (): Promise<void> => {
    let delay = firstLoadRetry.initialMs;
    while (!stopped && loadedAtMs === undefined) {
      await refresh();
      if (stopped || loadedAtMs !== undefined) return;
      await pause(delay);
      delay = Math.min(delay * 2, firstLoadRetry.maxMs);
    }
  };

  const flushUses = async ({ all = false } = {}): Promise<void> => {
    const time = now();
    const uses: TokenUse[] = [];
    for (const [id, at] of pendingUses) {
      if (!all && time - (reportedAt.get(id) ?? -Infinity) < usesEveryMs) continue;
      uses.push({ id, at_ms: at });
      pendingUses.delete(id);
      reportedAt.set(id, time);
    }
    for (let i = 0; i < uses.length; i += MAX_USES_PER_REPORT) {
      const batch = uses.slice(i, i + MAX_USES_PER_REPORT);
      try {
        await deps.store.recordUses(batch);
      } catch (error) {
        // Coarse by design: the next report carries them (unless a newer use replaced them).
        for (const use of batch) if (!pendingUses.has(use.id)) pendingUses.set(use.id, use.at_ms);
        logger.warn({ err: error, uses: batch.length }, "cannot report the tokens' last uses");
      }
    }
  };

  return {
    find(presented) {
      const entry = held.get(secretHash(presented));
      if (!entry) return undefined;
      const { grant } = entry;
      const time = now();
      if (grant.expiresAtMs !== undefined && time >= grant.expiresAtMs) return undefined;
      if (entry.stored) pendingUses.set(grant.id, time);
      return grant;
    },
    isComplete: () => loadedAtMs !== undefined,
    get size() {
      return held.size;
    },
    get storedSize() {
      return storedSize;
    },
    snapshotAgeMs: () => (loadedAtMs === undefined ? undefined : now() - loadedAtMs),
    refresh,
    flushUses,
    start() {
      stopped = false;
      void firstLoad();
      timers = [
        setInterval(() => void refresh(), refreshMs),
        setInterval(() => void flushUses(), usesEveryMs),
      ];
      for (const timer of timers) timer.unref();
    },
    async stop() {
      stopped = true;
      for (const timer of timers) clearInterval(timer);
      timers = [];
      wake?.();
      await flushUses({ all: true });
    },
  };
}

/** A stored token as authenticate.ts checks it: null fields are absent, windows in ms. */
function grantOf(token: HeldToken): TokenGrant {
  const limits = token.rate_limits
    ? Object.fromEntries(
        Object.entries(token.rate_limits).map(([routeClass, rule]) => [
          routeClass,
          { limit: rule.limit, windowMs: rule.window_seconds * 1000 },
        ]),
      )
    : undefined;
  return {
    id: token.id,
    scopes: token.scopes,
    ...(token.devices ? { devices: token.devices } : {}),
    ...(limits && Object.keys(limits).length > 0 ? { rateLimits: limits } : {}),
    ...(token.expires_at_ms !== null ? { expiresAtMs: token.expires_at_ms } : {}),
  };
}
