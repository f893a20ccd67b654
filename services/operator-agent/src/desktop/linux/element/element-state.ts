/**
 * One listed element as AT-SPI has it now: what it is (describe), its live states, and the web
 * page it is in. A listing's element is re-read here before anything is done to it.
 */
import { ElementGoneError, type UiElement } from '../../desktop';
import { decodeRef, isGoneError, type AtspiClient, type ObjectRef } from '../atspi/atspi.client';
import { hasState, NULL_PATH, ROLE, ROOT_PATH, STATE } from '../atspi/atspi.constants';
import { interactabilityOf } from '../listing/interactability';
import type { TreeCache } from '../listing/tree-cache';

/** Who to ask about an element: the client, and the latest listing's trees (its web page). */
export interface ElementLookup {
  atspi: AtspiClient;
  trees: Pick<TreeCache, 'documentAbove'>;
}

/** Desktop.describe: the element as it is now (role, name, bounds), or null when it is gone. */
export async function describeElement(
  atspi: AtspiClient,
  element: UiElement,
): Promise<UiElement | null> {
  const ref = decodeRef(element.ref);
  try {
    // One round trip: everything is asked at once, the role checked when it is back.
    const [role, name, states, bounds] = await Promise.all([
      atspi.role(ref),
      atspi.name(ref),
      atspi.states(ref),
      atspi.extents(ref),
    ]);
    if (role === ROLE.invalid) return null;
    const roleName = await atspi.roleName(ref, role);
    return {
      ...element,
      role: roleName,
      name,
      bounds,
      interactability: interactabilityOf(roleName, hasState(states, STATE.focusable)),
    };
  } catch (error) {
    if (isGoneError(error)) return null;
    throw error;
  }
}

/**
 * The element's states, ElementGoneError when they say "defunct": Chromium answers a moment
 * for an element the page has removed (role invalid, extents nowhere, GrabFocus refused), and
 * only then forgets it. Read as a live element it would be refused as covered (a conflict),
 * not named gone (seen once in CI, after describe() had returned null).
 */
export async function liveStates(
  atspi: AtspiClient,
  ref: ObjectRef,
  element: UiElement,
): Promise<[number, number]> {
  const states = await atspi.states(ref);
  if (hasState(states, STATE.defunct)) throw new ElementGoneError(element);
  return states;
}

/** Throws the error as ElementGoneError when it says the element (or its app) is gone. */
export const throwAsGone =
  (element: UiElement) =>
  (error: unknown): never => {
    throw isGoneError(error) ? new ElementGoneError(element) : error;
  };

/**
 * The web page (document) the element is in, not itself: from the tree of the latest listing,
 * else asked parent by parent.
 */
export async function documentOf(
  { atspi, trees }: ElementLookup,
  ref: ObjectRef,
): Promise<ObjectRef | undefined> {
  const known = trees.documentAbove(ref);
  if (known !== undefined) return known ?? undefined;
  let node = await atspi.parent(ref);
  for (let depth = 0; depth < 64 && node.path !== ROOT_PATH && node.path !== NULL_PATH; depth++) {
    if ((await atspi.role(node)) === ROLE.documentWeb) return node;
    node = await atspi.parent(node);
  }
  return undefined;
}
