import type { NewestItemTimes } from '@screenfleet/contracts';

/** A summary read's result: the times, or why they could not be read (judged by the route). */
export type SummaryResult = { ok: true; newest: NewestItemTimes } | { ok: false; error: unknown };

export interface HealthSummaryOptions {
  /** Reads the newest item times of these devices (undefined: the whole fleet). */
  read: (devices: readonly string[] | undefined) => Promise<NewestItemTimes>;
  /**
   * A summary is served as it is this long after its read ended; then the next read starts. From
   * the end, not the start: a store slow to answer is asked once per its answer time plus this,
   * never back to back.
   */
  maxAgeMs?: number;
  /** The same for a failed read: short, so an outage is noticed and its end too. */
  errorMaxAgeMs?: number;
  /**
   * Past maxAgeMs a refresh starts and callers get the summary they would have got (they never
   * queue behind a read), unless it is older than this: then they wait for the new one (a
   * summary read long ago, after an idle spell, is no base for judging capture stale or not).
   * Default 5 s: a second of age plus the longest read (the 2 s timeout) with room to spare, so
   * steady pollers never wait.
   */
  maxStaleMs?: number;
  /** Device sets kept (one per device-bound token that asked): the oldest goes past it. */
  maxEntries?: number;
  /** Milliseconds on a monotonic clock (default performance.now). */
  now?: () => number;
}

interface Entry {
  result?: SummaryResult;
  /** When the read behind `result` ended. */
  readAt: number;
  refresh: Promise<SummaryResult> | undefined;
}

export const HEALTH_SUMMARY_MAX_AGE_MS = 1000;

/**
 * GET /health's newest item times, read for its callers about once a second, whatever their
 * number: screenpipe's clients poll /health, and each read is a request on search.rpc, served
 * by the same ingest workers as searches (ADR 0008). One read in flight at a time for the whole
 * gateway (reads of several device sets queue one behind the other), shared by every caller
 * asking meanwhile; a summary past maxAgeMs is served while its refresh runs. Keyed by the
 * device set, so a device-bound token's summary is never another's. Each read is bounded by the
 * caller's `read` (the route's: a worker stops it when the gateway stops waiting).
 */
export class HealthSummaries {
  private readonly entries = new Map<string, Entry>();
  /** The last read queued: the next starts when it has settled. */
  private tail: Promise<unknown> = Promise.resolve();
  private readonly maxAgeMs: number;
  private readonly errorMaxAgeMs: number;
  private readonly maxStaleMs: number;
  private readonly maxEntries: number;
  private readonly now: () => number;

  constructor(private readonly options: HealthSummaryOptions) {
    this.maxAgeMs = options.maxAgeMs ?? HEALTH_SUMMARY_MAX_AGE_MS;
    this.errorMaxAgeMs = options.errorMaxAgeMs ?? 250;
    this.maxStaleMs = options.maxStaleMs ?? 5000;
    this.maxEntries = options.maxEntries ?? 1000;
    // Monotonic: a wall clock set back would keep a summary young, set forward would age it.
    this.now = options.now ?? (() => performance.now());
  }

  /** The summary of these devices (undefined: the fleet); never rejects. */
  get(devices: readonly string[] | undefined): Promise<SummaryResult> {
    const key = devices === undefined ? '*' : JSON.stringify([...new Set(devices)].sort());
    let entry = this.entries.get(key);
    if (!entry) {
      entry = { readAt: 0, refresh: undefined };
      this.entries.set(key, entry);
      for (const oldest of this.entries.keys()) {
        if (this.entries.size <= this.maxEntries) break;
        if (!this.entries.get(oldest)?.refresh) this.entries.delete(oldest);
      }
    }
    const { result } = entry;
    if (!result) return this.refresh(entry, devices);
    const age = this.now() - entry.readAt;
    if (age < (result.ok ? this.maxAgeMs : this.errorMaxAgeMs)) return Promise.resolve(result);
    const refreshed = this.refresh(entry, devices);
    return age <= this.maxStaleMs ? Promise.resolve(result) : refreshed;
  }

  /** The entry's refresh: the one under way, or a new one queued behind any other read. */
  private refresh(entry: Entry, devices: readonly string[] | undefined): Promise<SummaryResult> {
    if (entry.refresh) return entry.refresh;
    const refresh = this.tail.then(async (): Promise<SummaryResult> => {
      let result: SummaryResult;
      try {
        result = { ok: true, newest: await this.options.read(devices) };
      } catch (error) {
        result = { ok: false, error };
      }
      entry.result = result;
      entry.readAt = this.now();
      entry.refresh = undefined;
      return result;
    });
    entry.refresh = refresh;
    this.tail = refresh;
    return refresh;
  }
}
