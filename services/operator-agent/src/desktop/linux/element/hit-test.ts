/**
 * Whether a screen point shows the element: inside its web page's visible part, and what the
 * application's own hit test finds there. A click goes only where both say so.
 */
import { unlessGone, type ObjectRef } from '../atspi/atspi.client';
import { documentOf, type ElementLookup } from './element-state';

/** Hit tests asked at most to get a settled answer (isTopmostAt). */
const HIT_TEST_TRIES = 6;

/** Whether the point is inside the visible part of the element's web page, if it is in one. */
export async function insideDocument(
  lookup: ElementLookup,
  ref: ObjectRef,
  x: number,
  y: number,
): Promise<boolean> {
  const document = await documentOf(lookup, ref);
  if (!document) return true;
  const page = await lookup.atspi.extents(document);
  return x >= page.x && y >= page.y && x < page.x + page.width && y < page.y + page.height;
}

/**
 * Whether the application's hit test at the point finds the element or a part of it (a
 * button's label, say): no overlay of the page (a dialog, a cookie banner) covers it there.
 * Asked of its web page, or of the element itself outside one. Chromium answers a hit test
 * from its previous one and asks the page in the background (the first answer after the page
 * changed was the old one here), so it is asked until two answers 4 ms apart agree.
 */
export async function isTopmostAt(
  lookup: ElementLookup,
  ref: ObjectRef,
  x: number,
  y: number,
): Promise<boolean> {
  const { atspi } = lookup;
  const root = (await documentOf(lookup, ref)) ?? ref;
  let hit = await atspi.accessibleAtPoint(root, x, y);
  for (let asked = 1; asked < HIT_TEST_TRIES; asked++) {
    await new Promise((resolve) => setTimeout(resolve, 4));
    const again = await atspi.accessibleAtPoint(root, x, y);
    const same = again?.bus === hit?.bus && again?.path === hit?.path;
    hit = again;
    if (same && asked > 1) break;
  }
  for (let depth = 0; hit !== undefined && depth < 64; depth++) {
    if (hit.bus === ref.bus && hit.path === ref.path) return true;
    if (hit.path === root.path) return false;
    hit = (await atspi.parent(hit).catch(unlessGone)) ?? undefined;
  }
  return false;
}
