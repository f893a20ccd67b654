/**
 * Resident memory of the soak's processes over time: VmRSS from /proc every few seconds, and
 * per process the median over a window around a minute mark and over the last window of the
 * load (a median, so one sample taken just before a garbage collection does not decide).
 */
import { readdirSync, readFileSync } from 'node:fs';

export interface RssSample {
  /** Milliseconds since the load started. */
  at: number;
  mb: Record<string, number>;
}

/** VmRSS of a process in MB, undefined once it is gone. */
export function rssMb(pid: number): number | undefined {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1]);
    return Number.isFinite(kb) ? Math.round(kb / 102.4) / 10 : undefined;
  } catch {
    return undefined;
  }
}

/** Pids of the processes whose command line contains every one of `parts`. */
export function pidsWith(...parts: string[]): number[] {
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0').join(' ');
      if (parts.every((part) => cmdline.includes(part))) found.push(Number(entry));
    } catch {
      // ended meanwhile
    }
  }
  return found;
}

export class RssMeter {
  readonly samples: RssSample[] = [];

  constructor(private readonly pids: Record<string, number | undefined>) {}

  sample(at: number): void {
    const mb: Record<string, number> = {};
    for (const [name, pid] of Object.entries(this.pids)) {
      const value = pid === undefined ? undefined : rssMb(pid);
      if (value !== undefined) mb[name] = value;
    }
    this.samples.push({ at, mb });
  }

  /** Per process: the median of [from, to) (ms since the load started), or null if none. */
  medianOver(from: number, to: number): Record<string, number | null> {
    const window = this.samples.filter((s) => s.at >= from && s.at < to);
    return Object.fromEntries(
      Object.keys(this.pids).map((name) => {
        const values = window
          .map((s) => s.mb[name])
          .filter((v): v is number => v !== undefined)
          .sort((a, b) => a - b);
        if (values.length === 0) return [name, null];
        const mid = Math.floor(values.length / 2);
        const median = values.length % 2 ? values[mid]! : (values[mid - 1]! + values[mid]!) / 2;
        return [name, Math.round(median * 10) / 10];
      }),
    );
  }
}
