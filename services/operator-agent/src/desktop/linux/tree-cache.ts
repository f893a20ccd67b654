/**
 * Each application's listing candidates, kept between listings while nothing says they changed,
 * so a listing of an unchanged UI costs the bounds (read fresh every time) but not the whole
 * accessible tree: Cache.GetItems of a 500-element page (1500 nodes) is about half the work.
 *
 * What says the tree may have changed:
 * - an AT-SPI event of the application that can add, remove, rename or hide an element
 *   (isListingChange), counted per application by the client;
 * - a listed element that moved or vanished since the previous listing: scrolling sends no
 *   event, and what is showing changes with it;
 * - age: after TREE_MAX_AGE_MS the tree is read again whatever happened, for changes that give
 *   neither sign (an element scrolled into view inside a container where nothing listed moved).
 * Presses never use this: their re-check reads the element itself.
 */
import type { Bounds } from '../desktop';
import { IFACE } from './atspi.constants';
import type { Candidate } from './element-tree';

export const TREE_MAX_AGE_MS = 5000;

/**
 * True for an event that may change which elements a listing has or what it says about them.
 * Focus moving (every press) and text edits do not.
 */
export function isListingChange(iface: string, member: string, detail: unknown): boolean {
  if (iface === IFACE.cache) return true; // AddAccessible, RemoveAccessible
  if (iface !== IFACE.eventObject) return false;
  switch (member) {
    case 'StateChanged':
      return detail !== 'focused';
    case 'PropertyChange':
      return detail !== 'accessible-value';
    case 'ChildrenChanged':
    case 'BoundsChanged':
    case 'VisibleDataChanged':
      return true;
    default:
      return false;
  }
}

interface Entry {
  /** The application's change count when its tree was read. */
  changes: number;
  readAt: number;
  candidates: Candidate[];
  /** The bounds each candidate had in the latest listing (null: it had none, or was gone). */
  bounds: Map<string, Bounds | null>;
}

const sameBounds = (a: Bounds | null | undefined, b: Bounds | null): boolean =>
  a === b ||
  (a != null &&
    b !== null &&
    a.x === b.x &&
    a.y === b.y &&
    a.width === b.width &&
    a.height === b.height);

export class TreeCache {
  private readonly entries = new Map<string, Entry>();

  constructor(
    private readonly maxAgeMs = TREE_MAX_AGE_MS,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** The application's candidates if its change count is still `changes` and they are young. */
  get(app: string, changes: number): Candidate[] | undefined {
    const entry = this.entries.get(app);
    if (!entry || entry.changes !== changes || this.now() - entry.readAt > this.maxAgeMs) {
      return undefined;
    }
    return entry.candidates;
  }

  /**
   * The application's latest candidates, whatever changed since or however old they are: a
   * listing that reads the tree again reads their bounds meanwhile, most are still there.
   */
  previous(app: string): Candidate[] | undefined {
    return this.entries.get(app)?.candidates;
  }

  /** Candidates read from a tree fetched when the application's change count was `changes`. */
  save(app: string, changes: number, candidates: Candidate[]): void {
    this.entries.set(app, { changes, readAt: this.now(), candidates, bounds: new Map() });
  }

  /**
   * Records the bounds this listing read (by refKey; null: no size, or gone). With `compare`,
   * first checks them against the previous listing's: false (and the entry dropped) when an
   * element moved or vanished, so the tree must be read again.
   */
  record(app: string, bounds: ReadonlyMap<string, Bounds | null>, compare: boolean): boolean {
    const entry = this.entries.get(app);
    if (!entry) return false;
    if (compare) {
      for (const [key, now] of bounds) {
        if (!sameBounds(entry.bounds.get(key), now)) {
          this.entries.delete(app);
          return false;
        }
      }
    }
    for (const [key, now] of bounds) entry.bounds.set(key, now);
    return true;
  }

  /** Drops the entries of applications no longer on the bus. */
  keepOnly(apps: ReadonlySet<string>): void {
    for (const app of this.entries.keys()) if (!apps.has(app)) this.entries.delete(app);
  }
}
