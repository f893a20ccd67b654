/**
 * The soak's traffic: every request goes through `Traffic.call`, which bounds it with a
 * deadline, times it and files any answer but a 200 under its kind, status and error code
 * (`"add 503 broker_unavailable"`); `paced` starts a task at a fixed rate with a cap on how many
 * run at once, so each kind of request stays within its requests per second.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { percentiles } from './stats';

/** A request that got no answer in this long counts as a client timeout. */
const REQUEST_TIMEOUT_MS = 30_000;

export interface Answer {
  status: number;
  body: Record<string, unknown>;
  headers: Headers;
}

interface KindStats {
  requests: number;
  ok: number;
  latencies: number[];
}

export class Traffic {
  private readonly kinds = new Map<string, KindStats>();
  private readonly errorCounts = new Map<string, number>();

  constructor(
    private readonly token: (kind: string) => string,
    private readonly signal: AbortSignal,
  ) {}

  /**
   * One request of `kind`, recorded; undefined when no answer came (network error, timeout,
   * the run stopped). A body that is not JSON is recorded as `{}` with its status.
   */
  async call(
    kind: string,
    url: string,
    init: { method?: 'GET' | 'POST'; body?: unknown } = {},
  ): Promise<Answer | undefined> {
    const stats = this.statsOf(kind);
    stats.requests += 1;
    const started = performance.now();
    try {
      const response = await fetch(url, {
        method: init.method ?? 'GET',
        headers: {
          authorization: `Bearer ${this.token(kind)}`,
          ...(init.body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        ...(init.body === undefined
          ? {}
          : { body: typeof init.body === 'string' ? init.body : JSON.stringify(init.body) }),
        signal: AbortSignal.any([AbortSignal.timeout(REQUEST_TIMEOUT_MS), this.signal]),
      });
      const text = await response.text();
      stats.latencies.push(performance.now() - started);
      let body: Record<string, unknown> = {};
      try {
        body = JSON.parse(text) as Record<string, unknown>;
      } catch {
        // not JSON: the status says enough
      }
      if (response.status === 200) stats.ok += 1;
      else {
        const code = typeof body.code === 'string' ? body.code : 'no_code';
        this.error(kind, `${response.status} ${code}`);
      }
      return { status: response.status, body, headers: response.headers };
    } catch (error) {
      if (this.signal.aborted) this.error(kind, 'aborted (run stopped)');
      else if (error instanceof DOMException && error.name === 'TimeoutError')
        this.error(kind, `no answer in ${REQUEST_TIMEOUT_MS} ms`);
      else this.error(kind, `network ${networkCode(error)}`);
      return undefined;
    }
  }

  /** An error of another sort than an HTTP status (a wrong answer, a key that went astray). */
  error(kind: string, what: string): void {
    const key = `${kind} ${what}`;
    this.errorCounts.set(key, (this.errorCounts.get(key) ?? 0) + 1);
  }

  errors(): Record<string, number> {
    return Object.fromEntries([...this.errorCounts].sort(([a], [b]) => a.localeCompare(b)));
  }

  /** Errors that are not a 503 (which, with its code, is an allowed answer under load). */
  errorsBut503(): number {
    return [...this.errorCounts]
      .filter(([key]) => !/^\S+ 503 /.test(key))
      .reduce((sum, [, count]) => sum + count, 0);
  }

  /** Requests, 200s and latency percentiles (ms, answered requests) per kind. */
  summary(): Record<string, object> {
    return Object.fromEntries(
      [...this.kinds].map(([kind, stats]) => [
        kind,
        {
          requests: stats.requests,
          ok: stats.ok,
          latency_ms: {
            ...percentiles(stats.latencies, [50, 95, 99]),
            max: Math.round(Math.max(0, ...stats.latencies) * 10) / 10,
          },
        },
      ]),
    );
  }

  count(kind: string): { requests: number; ok: number } {
    const stats = this.statsOf(kind);
    return { requests: stats.requests, ok: stats.ok };
  }

  private statsOf(kind: string): KindStats {
    let stats = this.kinds.get(kind);
    if (!stats) {
      stats = { requests: 0, ok: 0, latencies: [] };
      this.kinds.set(kind, stats);
    }
    return stats;
  }
}

function networkCode(error: unknown): string {
  const cause = error instanceof Error ? (error.cause as { code?: string } | undefined) : undefined;
  return cause?.code ?? (error instanceof Error ? error.name : 'error');
}

/**
 * Starts `task` `rps` times a second while `running()` says so, at most `maxInFlight` at once;
 * a tick that finds them all busy is skipped (counted), never made up later, so a slow answer
 * lowers the rate instead of piling requests up. Resolves once the last task started has ended.
 */
export async function paced(
  rps: number,
  maxInFlight: number,
  running: () => boolean,
  task: (n: number) => Promise<void>,
): Promise<{ started: number; skipped: number }> {
  const interval = 1000 / rps;
  const inFlight = new Set<Promise<void>>();
  let start = performance.now();
  let tick = 0;
  let started = 0;
  let skipped = 0;
  while (running()) {
    const wait = start + tick * interval - performance.now();
    if (wait > 0) {
      await sleep(Math.min(wait, 250));
      continue;
    }
    // More than a second behind (a stalled event loop): skip the missed ticks, no burst.
    if (-wait > Math.max(1000, interval)) {
      const missed = Math.floor(-wait / interval);
      skipped += missed;
      start += missed * interval;
    }
    tick += 1;
    if (inFlight.size >= maxInFlight) {
      skipped += 1;
      continue;
    }
    const run = task(started)
      .catch((error: unknown) => {
        // A task records its own failures; one that throws is a bug of the soak: say so, go on.
        process.stderr.write(`[bench:soak] a task failed: ${String(error)}\n`);
      })
      .finally(() => inFlight.delete(run));
    started += 1;
    inFlight.add(run);
  }
  await Promise.all(inFlight);
  return { started, skipped };
}
