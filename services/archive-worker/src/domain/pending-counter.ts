import type { ArchiveSettings } from '@screenfleet/contracts';

interface Entry {
  retentionDays: number;
  at: number;
  count: Promise<number>;
  /** The count once it arrived. */
  value?: number;
}

/**
 * pending_count for status calls. Counting the pending range is the slow part of a status (a
 * scan on FerretDB), so one count serves every call; once it is older than `maxAgeMs` it is
 * still answered at once while a fresh count runs behind it, so a polling page never waits for
 * a scan. A change the worker makes itself (a chunk archived, a restore) calls `invalidate`, and
 * the next call waits for a new count: a status right after a change never shows the old one.
 */
export function createPendingCounter(options: {
  count: (settings: ArchiveSettings) => Promise<number>;
  now: () => Date;
  maxAgeMs: number;
}) {
  let current: Entry | undefined;
  let refreshing = false;

  function start(settings: ArchiveSettings): Entry {
    const entry: Entry = {
      retentionDays: settings.retention_days,
      at: options.now().getTime(),
      count: options.count(settings),
    };
    entry.count.then(
      (value) => (entry.value = value),
      () => {
        if (current === entry) current = undefined;
      },
    );
    return entry;
  }

  function refreshBehind(stale: Entry, settings: ArchiveSettings): void {
    if (refreshing) return;
    refreshing = true;
    const fresh = start(settings);
    fresh.count
      .then(
        () => {
          if (current === stale) current = fresh;
        },
        () => undefined,
      )
      .finally(() => (refreshing = false));
  }

  return {
    get(settings: ArchiveSettings): Promise<number> {
      if (!current || current.retentionDays !== settings.retention_days) {
        current = start(settings);
        return current.count;
      }
      if (current.value !== undefined && options.now().getTime() - current.at > options.maxAgeMs) {
        refreshBehind(current, settings);
        return Promise.resolve(current.value);
      }
      return current.count;
    },
    invalidate(): void {
      current = undefined;
    },
  };
}
