import { randomUUID } from 'node:crypto';
import { ConflictError } from '@screenfleet/contracts';
import type { UiElement } from '../desktop';

/** One listing as the agent saw it: element_index refers to `elements` (the full list). */
export interface Snapshot {
  cacheId: string;
  app: string;
  elements: readonly UiElement[];
  takenAt: number;
  expiresAt: number;
}

/**
 * The agent's listings, one per app: a new listing of an app replaces the old one, and
 * element_index always refers to the newest listing of this device, whichever app it was for.
 * Snapshots expire after ttlMs, so an index is never used against a screen long gone.
 */
export class SnapshotStore {
  private readonly byApp = new Map<string, Snapshot>();
  private newest: Snapshot | undefined;

  constructor(readonly ttlMs: number) {}

  save(app: string, elements: readonly UiElement[], now: number): Snapshot {
    const snapshot: Snapshot = {
      cacheId: randomUUID(),
      app,
      elements,
      takenAt: now,
      expiresAt: now + this.ttlMs,
    };
    this.byApp.set(app.trim().toLowerCase(), snapshot);
    this.newest = snapshot;
    this.prune(now);
    return snapshot;
  }

  /** The newest snapshot; ConflictError (409) when there is none or it expired. */
  current(now: number): Snapshot {
    const snapshot = this.newest;
    if (!snapshot) {
      throw new ConflictError(
        'no element listing on this device: call list-interactable-elements first',
      );
    }
    if (now >= snapshot.expiresAt) {
      throw new ConflictError(
        `the element listing ${snapshot.cacheId} expired ${now - snapshot.expiresAt} ms ago (ttl ${this.ttlMs} ms): list the elements again`,
      );
    }
    return snapshot;
  }

  private prune(now: number): void {
    for (const [app, snapshot] of this.byApp) {
      if (now >= snapshot.expiresAt) this.byApp.delete(app);
    }
  }
}
