/**
 * bench:auth — what checking a token costs the gateway per request (issue #40): the token
 * cache's lookup (one SHA-256 and one map read) and the rate limiter, for a stored token among
 * 1,000 held, and the lookup of an unknown token (the same work: the hash, a miss). In process,
 * no I/O; bench:ingest's half_load_auth shows the same cost end to end. Prints one JSON line.
 */
import { newTokenSecret } from '@screenfleet/contracts';
import { createLogger } from '@screenfleet/runtime';
import { createRateLimits } from '../services/gateway/src/auth/rate-limits';
import { createTokenCache } from '../services/gateway/src/auth/token-cache';
import { median } from './stats';

const HELD = 1000;
const REQUESTS = 200_000;
const RUNS = Number(process.env.BENCH_RUNS ?? 5);

async function main(): Promise<void> {
  const tokens = Array.from({ length: HELD }, () => newTokenSecret());
  const cache = createTokenCache({
    staticTokens: [],
    logger: createLogger({ service: 'bench-auth', level: 'silent' }),
    store: {
      snapshot: () =>
        Promise.resolve(
          tokens.map((t) => ({
            id: t.id,
            scopes: ['ingest' as const],
            devices: null,
            expires_at_ms: null,
            rate_limits: null,
            secret_hash: t.secretHash,
          })),
        ),
      recordUses: () => Promise.resolve(),
    },
  });
  await cache.refresh();
  // The default ingest limit: never reached here, every request is counted.
  const limits = createRateLimits({ ingest: { limit: 60_000, windowMs: 60_000 } });
  const known = tokens[HELD / 2]!.secret;
  const unknown = newTokenSecret().secret;
  const perRequestNs = (work: () => void) => {
    const started = process.hrtime.bigint();
    for (let i = 0; i < REQUESTS; i++) work();
    return Number(process.hrtime.bigint() - started) / REQUESTS;
  };
  const runs = Array.from({ length: RUNS }, () => ({
    known: perRequestNs(() => {
      const grant = cache.find(known);
      if (!grant || !limits.check('ingest', grant.id)) throw new Error('the token was not found');
    }),
    unknown: perRequestNs(() => {
      if (cache.find(unknown)) throw new Error('an unknown token was found');
    }),
  }));
  await cache.stop();
  console.log(
    JSON.stringify({
      bench: 'auth',
      tokens_held: HELD,
      requests_per_run: REQUESTS,
      runs: RUNS,
      ns_per_request: {
        stored_token_and_limit: Math.round(median(runs.map((r) => r.known))),
        unknown_token: Math.round(median(runs.map((r) => r.unknown))),
      },
    }),
  );
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
