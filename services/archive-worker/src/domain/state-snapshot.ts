import type { ArchiveState } from '@screenfleet/contracts';
import type { ArchiveStateStore } from '@screenfleet/storage';

/** One read of the state: when it started, and how many of this worker's writes preceded it. */
interface Read {
  at: number;
  writes: number;
}

interface Snapshot extends Read {
  state: ArchiveState;
}

interface Reading extends Read {
  done: Promise<ArchiveState>;
}

const ignore = () => undefined;

/**
 * The archive state GET /archive/status answers from, kept in memory so that a status call
 * costs no store read (a read per call made status ~10x a bare RPC). The rules:
 * - A change this worker makes itself is seen by the next status: every save or update through
 *   the store `track` returns counts as a write, and a snapshot from a read that started before
 *   a write ended is not used again (the next call waits for a read that started after it).
 * - What another worker changes (its pass, its configure) is seen within `maxAgeMs`: no status
 *   answers from a read that started longer ago. Once the snapshot is older than
 *   `refreshAfterMs` a read starts behind the answers, so a worker that is polled reads about
 *   once per refreshAfterMs and its callers do not wait; a worker no one asks reads nothing.
 * - One status read at a time, however many ask (single flight). A call that cannot use the
 *   read in flight (it started before a write ended, or too long ago) waits for one more after
 *   it, shared by every such call.
 * - A failed read fails the calls waiting for it, as the direct read did (a store outage is a
 *   store_unavailable once the snapshot is too old to answer) and the last good snapshot stays.
 * Loads through the tracked store refresh it too: the pass reads the state back after each
 * chunk it records, and the loop every lease_ttl/3.
 */
export function createStateSnapshot(options: {
  /** Reads the stored state (as the commands do). */
  load: () => Promise<ArchiveState>;
  now: () => Date;
  maxAgeMs: number;
  refreshAfterMs: number;
}) {
  /** This worker's writes that have ended (succeeded or not: a failed one may have landed). */
  let writes = 0;
  let current: Snapshot | undefined;
  let reading: Reading | undefined;
  let queued: Promise<ArchiveState> | undefined;
  const clock = () => options.now().getTime();

  /** Keeps the newest read: most writes before it, then latest start. */
  function offer(state: ArchiveState, read: Read): void {
    if (
      !current ||
      read.writes > current.writes ||
      (read.writes === current.writes && read.at >= current.at)
    ) {
      current = { state, at: read.at, writes: read.writes };
    }
  }

  /** A read started now may answer a call made at `now` or later, within the age bound. */
  const answers = (read: Read, now: number) =>
    read.writes === writes && now - read.at <= options.maxAgeMs;

  function startRead(): Reading {
    const read: Read = { at: clock(), writes };
    const done = new Promise<ArchiveState>((resolve) => resolve(options.load()))
      .then((state) => {
        offer(state, read);
        return state;
      })
      .finally(() => {
        if (reading?.done === done) reading = undefined;
      });
    reading = { ...read, done };
    return reading;
  }

  function freshRead(now: number): Promise<ArchiveState> {
    if (!reading) return startRead().done;
    if (answers(reading, now)) return reading.done;
    // Single flight: one more read once this one ended, shared by every call waiting for it.
    queued ??= reading.done.then(ignore, ignore).then(() => {
      queued = undefined;
      return (reading ?? startRead()).done;
    });
    return queued;
  }

  return {
    /** The state for a status call, by the rules above. */
    get(): Promise<ArchiveState> {
      const now = clock();
      const snapshot = current;
      if (!snapshot || !answers(snapshot, now)) return freshRead(now);
      if (now - snapshot.at > options.refreshAfterMs && !reading) {
        startRead().done.catch(ignore); // behind the answers: its failure waits for a caller
      }
      return Promise.resolve(snapshot.state);
    },
    /** `store` with its writes and loads seen by the snapshot; use it for every state access. */
    track(store: ArchiveStateStore): ArchiveStateStore {
      const written = (write: Promise<void>) => write.finally(() => (writes += 1));
      return {
        async load(initial) {
          const read: Read = { at: clock(), writes };
          const state = await store.load(initial);
          offer(state, read);
          return state;
        },
        save: (state) => written(store.save(state)),
        update: (fields) => written(store.update(fields)),
        acquireLease: (holder, ttlMs, now, lease) => store.acquireLease(holder, ttlMs, now, lease),
        releaseLease: (holder, lease) => store.releaseLease(holder, lease),
        leaseHolder: (now, lease) => store.leaseHolder(now, lease),
        close: () => store.close(),
      };
    },
  };
}

export type StateSnapshot = ReturnType<typeof createStateSnapshot>;
