import { WorkerUnavailableError, type HeldToken } from '@screenfleet/contracts';
import { createLogger, waitFor } from '@screenfleet/runtime';
import { createTokenCache, type StoredTokens, type TokenUse } from './token-cache';
import { type TokenEntry } from './tokens';
import { secretHash } from '@screenfleet/contracts';

const logger = createLogger({ service: 'gateway', level: 'silent' });
const admin: TokenEntry = {
  id: 'admin',
  token: 'configured-admin-token-01',
  scopes: ['tokens:admin'],
};
const secret = (n: number) => `sf_stored-secret-${n}`;

function buildHeld(n: number, overrides: Partial<HeldToken> = {}): HeldToken {
  return {
    id: `tok_${n.toString(16).padStart(16, '0')}`,
    scopes: ['ingest'],
    devices: null,
    expires_at_ms: null,
    rate_limits: null,
    secret_hash: secretHash(secret(n)),
    ...overrides,
  };
}

/** The tokens.rpc stand-in: answers from `tokens`, fails while `failing`, or holds while `held`. */
interface FakeStore extends StoredTokens {
  tokens: HeldToken[];
  failing: boolean;
  snapshots: number;
  reports: TokenUse[][];
  gate: Promise<void> | undefined;
}

function fakeStore(tokens: HeldToken[] = []): FakeStore {
  const store: FakeStore = {
    tokens,
    failing: false,
    snapshots: 0,
    reports: [],
    gate: undefined,
    async snapshot() {
      store.snapshots += 1;
      if (store.gate) await store.gate;
      if (store.failing) throw new WorkerUnavailableError('no answer from an ingest worker');
      return [...store.tokens];
    },
    recordUses(uses: TokenUse[]) {
      store.reports.push(uses);
      return Promise.resolve();
    },
  };
  return store;
}

function cacheOf(store: StoredTokens, clock = { now: 1_000_000 }) {
  const results: string[] = [];
  const cache = createTokenCache({
    staticTokens: [admin],
    store,
    logger,
    observer: { snapshotLoaded: (result) => results.push(result) },
    options: { now: () => clock.now, firstLoadRetry: { initialMs: 1, maxMs: 4 } },
  });
  return { cache, clock, results };
}

describe('the token cache', () => {
  it('when a snapshot is loaded, then a stored token is found by its secret with its grant, and a secret one character off is not', async () => {
    const limited = buildHeld(1, {
      devices: ['desk-1'],
      rate_limits: { ingest: { limit: 10, window_seconds: 60 } },
    });
    const { cache, results } = cacheOf(fakeStore([limited, buildHeld(2)]));
    await cache.refresh();

    expect(cache.find(secret(1))).toEqual({
      id: limited.id,
      scopes: ['ingest'],
      devices: ['desk-1'],
      rateLimits: { ingest: { limit: 10, windowMs: 60_000 } },
    });
    expect(cache.find(secret(2))?.id).toBe(buildHeld(2).id);
    expect(cache.find(`${secret(1)}x`)).toBeUndefined();
    expect(cache.storedSize).toBe(2);
    expect(cache.isComplete()).toBe(true);
    expect(results).toEqual(['ok']);
  });

  it('when a token expires, then it is found until the ms before and refused from that exact ms on', async () => {
    const { cache, clock } = cacheOf(fakeStore([buildHeld(1, { expires_at_ms: 2_000_000 })]));
    await cache.refresh();

    clock.now = 1_999_999;
    expect(cache.find(secret(1))).toMatchObject({ expiresAtMs: 2_000_000 });
    clock.now = 2_000_000;
    expect(cache.find(secret(1))).toBeUndefined();
  });

  it('when a reload fails, then the last snapshot is kept (fail static) and the failure counted', async () => {
    const store = fakeStore([buildHeld(1)]);
    const { cache, results } = cacheOf(store);
    await cache.refresh();
    store.failing = true;
    store.tokens = [];
    await cache.refresh();

    expect(cache.find(secret(1))?.id).toBe(buildHeld(1).id);
    expect(cache.isComplete()).toBe(true);
    expect(results).toEqual(['ok', 'worker_unavailable']);
  });

  it('when a token is revoked (gone from the next snapshot), then it is refused', async () => {
    const store = fakeStore([buildHeld(1), buildHeld(2)]);
    const { cache } = cacheOf(store);
    await cache.refresh();
    store.tokens = [buildHeld(2)];
    await cache.refresh();

    expect(cache.find(secret(1))).toBeUndefined();
    expect(cache.find(secret(2))).toBeDefined();
  });

  it('when no snapshot was ever loaded, then the configured token is found, others are unknown, and the registry says it is not complete', async () => {
    const store = fakeStore([buildHeld(1)]);
    store.failing = true;
    const { cache } = cacheOf(store);
    await cache.refresh();

    expect(cache.find(admin.token)).toEqual({ id: 'admin', scopes: ['tokens:admin'] });
    expect(cache.find(secret(1))).toBeUndefined();
    expect(cache.isComplete()).toBe(false);
    expect(cache.snapshotAgeMs()).toBeUndefined();
  });

  it('when a stored token has the secret of a configured one (imported), then the configured grant wins', async () => {
    const { cache } = cacheOf(
      fakeStore([{ ...buildHeld(1), secret_hash: secretHash(admin.token) }]),
    );
    await cache.refresh();
    expect(cache.find(admin.token)?.id).toBe('admin');
  });

  it('when changes come in a burst, then one load runs and one more is queued behind it for all of them', async () => {
    const store = fakeStore([buildHeld(1)]);
    let release = () => {};
    store.gate = new Promise<void>((resolve) => (release = resolve));
    const { cache } = cacheOf(store);

    const burst = Array.from({ length: 10 }, () => cache.refresh());
    expect(store.snapshots).toBe(1);
    store.tokens = [buildHeld(1), buildHeld(2)];
    store.gate = undefined;
    release();
    await Promise.all(burst);

    expect(store.snapshots).toBe(2);
    // The queued load started after the burst's last change: it saw it.
    expect(cache.find(secret(2))).toBeDefined();
  });

  it('when started with no store answering, then it retries in the background until a load succeeds', async () => {
    const store = fakeStore([buildHeld(1)]);
    store.failing = true;
    const { cache } = cacheOf(store);
    cache.start();
    try {
      await waitFor(() => store.snapshots >= 3, {
        timeoutMs: 1000,
        intervalMs: 2,
        what: '3 loads',
      });
      expect(cache.isComplete()).toBe(false);
      store.failing = false;
      await waitFor(() => cache.isComplete(), { timeoutMs: 1000, intervalMs: 2, what: 'a load' });
      expect(cache.find(secret(1))).toBeDefined();
      const loads = store.snapshots;
      // No retry once loaded: the retries' pauses are 4 ms at most, so 20 ms would show one.
      await new Promise((resolve) => setTimeout(resolve, 20));
      expect(store.snapshots).toBe(loads);
    } finally {
      await cache.stop();
    }
  });

  it('when a stored token is used often, then its latest use is reported at most once a minute, batched with others; configured tokens are not reported', async () => {
    const store = fakeStore([buildHeld(1), buildHeld(2)]);
    const { cache, clock } = cacheOf(store);
    await cache.refresh();
    const [one, two] = [buildHeld(1).id, buildHeld(2).id];

    cache.find(secret(1));
    cache.find(admin.token);
    clock.now += 500;
    cache.find(secret(1));
    cache.find(secret(2));
    await cache.flushUses();
    expect(store.reports).toEqual([
      [
        { id: one, at_ms: 1_000_500 },
        { id: two, at_ms: 1_000_500 },
      ],
    ]);

    clock.now += 30_000;
    cache.find(secret(1));
    await cache.flushUses();
    expect(store.reports).toHaveLength(1); // reported 30 s ago: kept for later

    clock.now += 30_000;
    await cache.flushUses();
    expect(store.reports[1]).toEqual([{ id: one, at_ms: 1_030_500 }]);

    clock.now += 1;
    cache.find(secret(2));
    await cache.stop(); // a stop reports what is left, however recent
    expect(store.reports[2]).toEqual([{ id: two, at_ms: 1_060_501 }]);
  });

  it('when a use report fails, then it is not fatal and the use goes with the next report', async () => {
    const store = fakeStore([buildHeld(1)]);
    const reports: TokenUse[][] = [];
    let failing = true;
    store.recordUses = (uses) => {
      if (failing) return Promise.reject(new WorkerUnavailableError('no answer'));
      reports.push(uses);
      return Promise.resolve();
    };
    const { cache } = cacheOf(store);
    await cache.refresh();
    cache.find(secret(1));
    await cache.flushUses();
    failing = false;
    await cache.flushUses({ all: true });
    expect(reports).toEqual([[{ id: buildHeld(1).id, at_ms: 1_000_000 }]]);
  });
});
