/**
 * Each application's tree (app-tree.ts), kept between listings and current from its events, so
 * a listing costs the bounds (read fresh every time) but not the whole accessible tree:
 * Cache.GetItems of a 500-element page (1500 nodes) is about half the work, and a listing right
 * after the page changed costs no more than one of the unchanged page.
 *
 * The tree is read again when:
 * - its model is not current (an event it could not apply, or events during its read);
 * - a listed element moved or vanished since the previous listing: scrolling sends no event,
 *   and what is showing changes with it;
 * - age: after TREE_MAX_AGE_MS whatever happened, for changes that give neither sign (an element
 *   scrolled into view inside a container where nothing listed moved).
 * Presses never use this for their decision: their re-check reads the element itself.
 */
import type { Bounds } from '../../desktop';
import type { AtspiNode, ObjectRef } from '../atspi/atspi.client';
import { AppTree, isTreeEvent } from './app-tree';
import type { IncomingMessage } from '../dbus/dbus.connection';
import type { Candidate } from './element-tree';

export const TREE_MAX_AGE_MS = 5000;

interface Entry {
  tree: AppTree;
  /** The bounds each candidate had in the latest listing (null: it had none, or was gone). */
  bounds: Map<string, Bounds | null>;
  /** The tree's change count at the latest listing. */
  listedChanges: number;
}

/** A tree read under way: whether the application sent a tree event meanwhile. */
interface Reading {
  changed: boolean;
}

const sameBounds = (a: Bounds | null, b: Bounds | null): boolean =>
  a === b ||
  (a !== null &&
    b !== null &&
    a.x === b.x &&
    a.y === b.y &&
    a.width === b.width &&
    a.height === b.height);

export class TreeCache {
  private readonly entries = new Map<string, Entry>();
  private readonly reading = new Map<string, Set<Reading>>();

  constructor(
    private readonly maxAgeMs = TREE_MAX_AGE_MS,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /**
   * Every signal of the accessibility bus: an application's events update its tree. Returns the
   * application whose kept tree it changed, if any.
   */
  onSignal(signal: IncomingMessage): string | undefined {
    const app = signal.sender;
    if (app === undefined) return undefined;
    const reads = this.reading.get(app);
    if (reads && isTreeEvent(signal)) for (const read of reads) read.changed = true;
    return this.entries.get(app)?.tree.apply(signal) ? app : undefined;
  }

  /** The application's candidates if its tree is current and young. */
  get(app: string): Candidate[] | undefined {
    const tree = this.entries.get(app)?.tree;
    if (!tree || !tree.current || this.now() - tree.readAt > this.maxAgeMs) return undefined;
    return tree.candidates();
  }

  /**
   * The application's latest candidates, whatever changed since or however old they are: a
   * listing that reads the tree again reads their bounds meanwhile, most are still there.
   */
  previous(app: string): Candidate[] | undefined {
    return this.entries.get(app)?.tree.candidates();
  }

  /**
   * Reads the application's tree with `read` and keeps it. A tree event during the read may or
   * may not be in what it returned: such a tree serves this listing and is read again next time,
   * unless the kept tree is current (it has the event): that one stays.
   */
  async read(app: ObjectRef, read: () => Promise<AtspiNode[]>): Promise<Candidate[]> {
    const reading: Reading = { changed: false };
    const reads = this.reading.get(app.bus) ?? new Set<Reading>();
    this.reading.set(app.bus, reads.add(reading));
    const startedAt = this.now();
    try {
      const tree = new AppTree(app, await read(), startedAt);
      const kept = this.entries.get(app.bus)?.tree;
      if (reading.changed) {
        // The kept tree had those events applied: better than a read that may lack them.
        if (kept?.current) return kept.candidates();
        tree.invalidate();
      }
      this.entries.set(app.bus, { tree, bounds: new Map(), listedChanges: 0 });
      return tree.candidates();
    } finally {
      reads.delete(reading);
      if (reads.size === 0) this.reading.delete(app.bus);
    }
  }

  /**
   * Records the bounds this listing read (by refKey; null: no size, or gone). With `compare`,
   * first checks those of elements listed before against that listing's. One moved or vanished:
   * - 'changed' when the page's own events changed the tree since that listing (the move follows
   *   from a change the tree has): the tree serves, and should be read again soon (what is
   *   showing may have changed with the move, which no event says);
   * - 'moved' (and the tree marked for a read) when nothing explains it: a scroll.
   * 'same' otherwise.
   */
  record(
    app: string,
    bounds: ReadonlyMap<string, Bounds | null>,
    compare: boolean,
  ): 'same' | 'changed' | 'moved' {
    const entry = this.entries.get(app);
    if (!entry) return 'moved';
    let outcome: 'same' | 'changed' | 'moved' = 'same';
    if (compare) {
      for (const [key, now] of bounds) {
        const before = entry.bounds.get(key);
        if (before !== undefined && !sameBounds(before, now)) {
          if (entry.tree.changes === entry.listedChanges) {
            entry.tree.invalidate();
            return 'moved';
          }
          outcome = 'changed';
          break;
        }
      }
    }
    for (const [key, now] of bounds) entry.bounds.set(key, now);
    entry.listedChanges = entry.tree.changes;
    return outcome;
  }

  /** The web page above the node: null for none, undefined when the tree does not know it. */
  documentAbove(ref: ObjectRef): ObjectRef | null | undefined {
    return this.entries.get(ref.bus)?.tree.documentAbove(ref);
  }

  /** Drops the entries of applications no longer on the bus. */
  keepOnly(apps: ReadonlySet<string>): void {
    for (const app of this.entries.keys()) if (!apps.has(app)) this.entries.delete(app);
  }
}
