import { randomUUID } from 'node:crypto';
import { ConflictError } from '@screenfleet/contracts';
import type { UiElement } from '../desktop/desktop';

/** One listing as the agent saw it: element_index refers to `elements` (the full list). */
export interface Snapshot {
  cacheId: string;
  app: string;
  elements: readonly UiElement[];
  takenAt: number;
  expiresAt: number;
  /** The token the listing was made with (the command's requested_by). */
  requestedBy?: string | undefined;
}

/**
 * The device's current listing: one per device, whichever app it was for. A new listing
 * replaces the previous one, so a press that names an older listing (its cache_id) is refused
 * rather than applied to elements it never saw. Without a cache_id, element_index refers to
 * the newest listing. Snapshots expire after ttlMs, so an index is never used against a screen
 * long gone.
 */
export class SnapshotStore {
  private newest: Snapshot | undefined;

  constructor(readonly ttlMs: number) {}

  save(app: string, elements: readonly UiElement[], now: number, requestedBy?: string): Snapshot {
    this.newest = {
      cacheId: randomUUID(),
      app,
      elements,
      takenAt: now,
      expiresAt: now + this.ttlMs,
      requestedBy,
    };
    return this.newest;
  }

  /**
   * The current snapshot, which must be `cacheId` when one is given; ConflictError (409) when
   * there is none, it expired, or a newer listing replaced the one named. Without a cacheId the
   * newest listing must have been made by `requestedBy` (the same token): another client's
   * listing of another app would have the index point at another element.
   */
  current(now: number, cacheId?: string, requestedBy?: string): Snapshot {
    const snapshot = this.newest;
    if (!snapshot) {
      throw new ConflictError(
        'no element listing on this device: call list-interactable-elements first',
      );
    }
    if (cacheId !== undefined && cacheId !== snapshot.cacheId) {
      throw new ConflictError(
        `the element listing ${cacheId} is no longer this device's current one (a newer listing, ${snapshot.cacheId}, replaced it): list the elements again`,
      );
    }
    if (cacheId === undefined && snapshot.requestedBy !== requestedBy) {
      throw new ConflictError(
        `the newest element listing on this device (${snapshot.cacheId}) was made by another client: send the cache_id of your own listing (cache_info.cache_id), or list the elements again`,
      );
    }
    if (now >= snapshot.expiresAt) {
      throw new ConflictError(
        `the element listing ${snapshot.cacheId} expired ${now - snapshot.expiresAt} ms ago (ttl ${this.ttlMs} ms): list the elements again`,
      );
    }
    return snapshot;
  }
}
