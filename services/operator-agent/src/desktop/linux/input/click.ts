/**
 * Desktop.click on Linux: one left click at the element's centre, only when that point is on
 * the screen, inside its web page, and the application's hit test finds the element there.
 */
import { ConflictError } from '@screenfleet/contracts';
import type { UiElement } from '../../desktop';
import { decodeRef, type AtspiClient } from '../atspi/atspi.client';
import { hasState, STATE } from '../atspi/atspi.constants';
import { liveStates, throwAsGone } from '../element/element-state';
import { insideDocument, isTopmostAt } from '../element/hit-test';
import type { TreeCache } from '../listing/tree-cache';
import type { X11Connection } from '../x11/x11.connection';
import type { InputPacing } from './input-pacing';
import type { NutInput } from './nut.input';

export interface ClickDeps {
  /** The AT-SPI client bounded by the deadline (DesktopUnavailableError once closed). */
  atspi(deadline: number | undefined): AtspiClient;
  trees: Pick<TreeCache, 'documentAbove'>;
  input: Pick<NutInput, 'click'>;
  pacing: Pick<InputPacing, 'taken'>;
  /** The desktop's X connection (the screen's size). */
  x11(): Promise<X11Connection>;
}

export async function clickElement(
  deps: ClickDeps,
  element: UiElement,
  deadline: number | undefined,
): Promise<void> {
  const atspi = deps.atspi(deadline);
  const lookup = { atspi, trees: deps.trees };
  const ref = decodeRef(element.ref);
  const [states, bounds] = await Promise.all([
    liveStates(atspi, ref, element),
    atspi.extents(ref),
  ]).catch(throwAsGone(element));
  const x = Math.round(bounds.x + bounds.width / 2);
  const y = Math.round(bounds.y + bounds.height / 2);
  const refuse = (why: string) =>
    new ConflictError(
      `not clicking the element '${element.name}' (${element.role}): ${why}; nothing was clicked`,
    );
  const screen = (await deps.x11()).setup;
  const onScreen =
    hasState(states, STATE.showing) &&
    x >= 0 &&
    y >= 0 &&
    x < screen.screenWidth &&
    y < screen.screenHeight &&
    (await insideDocument(lookup, ref, x, y));
  if (!onScreen) throw refuse(`its centre (${x}, ${y}) is not on the screen`);
  if (!(await isTopmostAt(lookup, ref, x, y))) {
    throw refuse(`something else is at its centre (${x}, ${y})`);
  }
  await deps.input.click(x, y, { deadline });
  await deps.pacing.taken(deadline);
}
