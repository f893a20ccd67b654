/**
 * Something that happens now and then (a commit, the last read ending), and callers waiting for
 * its next time, each for at most a while.
 */
export interface BoundedSignal {
  /** Resolves true the next time it happens, false at `waitMs` (Infinity: no bound). */
  wait(waitMs: number): Promise<boolean>;
  /** It happened: every caller waiting resolves true. */
  notify(): void;
}

export function createBoundedSignal(): BoundedSignal {
  const waiting = new Set<(happened: boolean) => void>();
  return {
    wait(waitMs) {
      return new Promise((resolve) => {
        const done = (happened: boolean) => {
          waiting.delete(done);
          clearTimeout(timer);
          resolve(happened);
        };
        // setTimeout would take Infinity for 1 ms.
        const timer = Number.isFinite(waitMs) ? setTimeout(() => done(false), waitMs) : undefined;
        waiting.add(done);
      });
    },
    notify() {
      for (const done of [...waiting]) done(true);
    },
  };
}
