/**
 * Desktop.listElements on Linux: every application's interactable elements, its tree from the
 * cache (tree-cache.ts) and the bounds read fresh every time.
 */
import type { ElementFilter, ElementRef, ListOptions, UiElement } from '../../desktop';
import {
  isGoneError,
  unlessGone,
  type AtspiClient,
  type Extents,
  type ObjectRef,
} from '../atspi/atspi.client';
import type { AtspiTreeReader } from '../atspi/atspi.tree';
import { orderCandidates, type Candidate } from './element-tree';
import { interactabilityOf } from './interactability';
import type { TreeCache } from './tree-cache';

export interface ListingDeps {
  /** The AT-SPI client (DesktopUnavailableError once the desktop is closed). */
  atspi(): AtspiClient;
  trees: TreeCache;
  reader: Pick<AtspiTreeReader, 'nodes'>;
  /** Once closed, no tree is read again in the background. */
  isClosed(): boolean;
}

/** Bounds read in one listing, by candidate key: Extents, or the error of an element gone. */
type BoundsByKey = Map<string, Extents | Error>;

const isExtents = (box: Extents | Error | undefined): box is Extents =>
  box !== undefined && !(box instanceof Error);

/** The bounds an element is listed with: null when it is gone or has no size. */
const sizedBounds = (box: Extents | Error | undefined): Extents | null =>
  isExtents(box) && box.width > 0 && box.height > 0 ? box : null;

function matches(filterValue: string | undefined, actual: string, whole: boolean): boolean {
  if (filterValue === undefined || filterValue === '') return true;
  const wanted = filterValue.trim().toLowerCase();
  const value = actual.toLowerCase();
  return whole ? value === wanted : value.includes(wanted);
}

/**
 * Reads the candidates' bounds into `into`, in one batch. Any error but "gone" (a hung app's
 * timeout) is thrown at once: asking again would only wait for it again.
 */
async function readBounds(
  atspi: AtspiClient,
  candidates: readonly Candidate[],
  into: BoundsByKey,
): Promise<void> {
  if (candidates.length === 0) return;
  const boxes = await atspi.extentsOf(candidates.map((c) => c.node.ref));
  for (const box of boxes) if (box instanceof Error) unlessGone(box);
  candidates.forEach((c, i) => into.set(c.key, boxes[i] as Extents | Error));
}

/** What the tree cache compares between listings. */
const listedBounds = (candidates: readonly Candidate[], bounds: BoundsByKey) =>
  new Map(candidates.map((c) => [c.key, sizedBounds(bounds.get(c.key))] as const));

/**
 * The candidates' elements, from the bounds read in this listing and the role names learned
 * (an element gone, without a size, or of a role whose name could not be read since every
 * element with it is gone is left out). DOM ids are read here, on request only.
 */
async function toElements(
  atspi: AtspiClient,
  app: string,
  candidates: readonly Candidate[],
  bounds: BoundsByKey,
  options: ListOptions,
): Promise<UiElement[]> {
  const refs = candidates.map((c) => c.node.ref);
  const attributes = options.domIds
    ? await Promise.all(refs.map((ref) => atspi.attributes(ref).catch(unlessGone)))
    : [];
  const elements = candidates.map(({ node, key, window }, i): UiElement | null => {
    const box = sizedBounds(bounds.get(key));
    const role = atspi.knownRoleName(node.role);
    if (box === null || role === undefined) return null;
    if (options.domIds && attributes[i] === null) return null; // gone meanwhile
    const element: UiElement = {
      role,
      name: node.name,
      bounds: box,
      app,
      window,
      ref: key as ElementRef, // encodeRef(node.ref), made once per tree read
      interactability: interactabilityOf(role, true),
    };
    const domId = attributes[i]?.id;
    if (domId) element.domId = domId;
    return element;
  });
  return elements.filter((e): e is UiElement => e !== null);
}

export function elementLister(
  deps: ListingDeps,
): (filter: ElementFilter, options?: ListOptions) => Promise<UiElement[]> {
  const { trees, reader } = deps;

  /**
   * Reads an application's tree again in the background, once at a time: after a listing found
   * elements moved by a change the tree had from the events (what is showing may have changed
   * with them, which no event says), so that the next listing has it without a read on its way.
   */
  const refreshing = new Set<string>();
  const refreshSoon = (app: ObjectRef): void => {
    if (deps.isClosed() || refreshing.has(app.bus)) return;
    refreshing.add(app.bus);
    void trees
      .read(app, () => reader.nodes(app))
      .catch(() => undefined) // the next listing reads it, and says why if it fails again
      .finally(() => refreshing.delete(app.bus));
  };

  /**
   * One application's elements. Its tree comes from the cache, kept current from the
   * application's events (tree-cache.ts); the bounds are read every time, and one that moved
   * since the previous listing (a scroll sends no event) has the tree read again. When the tree
   * is read, the bounds already read in this listing serve the elements still in it: after a
   * change most of a UI is where it was, and each GetExtents costs the application as much as
   * any other call (README, "Listing cost").
   */
  const appElements = async (
    atspi: AtspiClient,
    app: ObjectRef,
    filter: ElementFilter,
    options: ListOptions,
  ): Promise<UiElement[]> => {
    try {
      const appName = await atspi.appName(app);
      if (!matches(filter.appName, appName, true)) return [];
      const inWindow = (c: Candidate) => matches(filter.windowName, c.window, false);
      const readTree = async () =>
        (atspi.tracksEvents
          ? await trees.read(app, () => reader.nodes(app))
          : orderCandidates(app, await reader.nodes(app))
        ).filter(inWindow);
      const bounds: BoundsByKey = new Map();
      // appName() came over the bus after every event the app sent before it: the tree is current.
      const cached = atspi.tracksEvents ? trees.get(app.bus)?.filter(inWindow) : undefined;
      // Role names are learned alongside the bounds: once per role, so mostly nothing to ask.
      const learnRoles = (candidates: readonly Candidate[]) =>
        atspi.learnRoleNames(candidates.map((c) => c.node));
      if (cached !== undefined) {
        await Promise.all([readBounds(atspi, cached, bounds), learnRoles(cached)]);
        const outcome = trees.record(app.bus, listedBounds(cached, bounds), true);
        if (outcome === 'changed') refreshSoon(app);
        if (outcome !== 'moved') return await toElements(atspi, appName, cached, bounds, options);
      }
      // The tree is read; the bounds of what the previous tree listed are read in the same
      // write, unless this listing has read them already.
      const previous =
        cached === undefined ? (trees.previous(app.bus)?.filter(inWindow) ?? []) : [];
      const [candidates] = await Promise.all([readTree(), readBounds(atspi, previous, bounds)]);
      const unread = candidates.filter((c) => !isExtents(bounds.get(c.key)));
      await Promise.all([readBounds(atspi, unread, bounds), learnRoles(candidates)]);
      trees.record(app.bus, listedBounds(candidates, bounds), false);
      return await toElements(atspi, appName, candidates, bounds, options);
    } catch (error) {
      if (isGoneError(error)) return []; // the app quit while we listed
      throw error;
    }
  };

  return async (filter, options = {}) => {
    const atspi = deps.atspi();
    const apps = await atspi.applications();
    trees.keepOnly(new Set(apps.map((app) => app.bus)));
    const perApp = await Promise.all(apps.map((app) => appElements(atspi, app, filter, options)));
    return perApp.flat();
  };
}
