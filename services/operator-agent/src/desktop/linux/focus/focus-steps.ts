/**
 * Desktop.focus on Linux: focus.ts's decisions, over its steps done with AT-SPI (GrabFocus and
 * the events that answer it) and the input child (the fallback click on a text field).
 */
import type { CallOptions, UiElement } from '../../desktop';
import { decodeRef, isGoneError, type AtspiClient, type ObjectRef } from '../atspi/atspi.client';
import { hasState, STATE } from '../atspi/atspi.constants';
import type { IncomingMessage } from '../dbus/dbus.connection';
import { documentOf, liveStates } from '../element/element-state';
import { isTopmostAt } from '../element/hit-test';
import type { TreeCache } from '../listing/tree-cache';
import { focusElement, type FocusSteps } from './focus';
import { recordFocusEvents } from './focus-events';

export interface FocusDeps {
  /** The AT-SPI client bounded by the deadline (DesktopUnavailableError once closed). */
  atspi(deadline: number | undefined): AtspiClient;
  trees: Pick<TreeCache, 'documentAbove'>;
  /** Hands the listener every bus signal from now on; returns how to stop. */
  subscribe: (listener: (signal: IncomingMessage) => void) => () => void;
  /** Waits until a focus request may go after our last key or click (input-pacing.ts). */
  inputSettled(deadline: number | undefined): Promise<void>;
  click(x: number, y: number, options: CallOptions): Promise<void>;
  /** How long to wait for the element's focus event before the fallback click. */
  focusTimeoutMs: number;
}

export async function focusOnAtspi(
  deps: FocusDeps,
  element: UiElement,
  deadline: number | undefined,
): Promise<void> {
  await focusElement(element, focusSteps(deps, element, deadline), {
    focusTimeoutMs: deps.focusTimeoutMs,
    deadline,
  });
}

/** focus.ts's steps for one element, on AT-SPI and the input child. */
function focusSteps(deps: FocusDeps, element: UiElement, deadline: number | undefined): FocusSteps {
  const atspi = deps.atspi(deadline);
  const lookup = { atspi, trees: deps.trees };
  const ref = decodeRef(element.ref);
  let document: Promise<ObjectRef | undefined> | undefined;
  const documentRef = () => (document ??= documentOf(lookup, ref));
  return {
    record: () => {
      const events = recordFocusEvents(deps.subscribe, ref);
      return {
        next: async (which, timeoutMs) =>
          events.next(which === 'element' ? ref : ((await documentRef()) ?? ref), timeoutMs),
        stop: () => events.stop(),
      };
    },
    reportsFocused: async () => hasState(await liveStates(atspi, ref, element), STATE.focused),
    inDocument: async () => (await documentRef()) !== undefined,
    grabFocus: async (which) => {
      const target = which === 'element' ? ref : ((await documentRef()) ?? ref);
      await deps.inputSettled(deadline);
      return atspi.grabFocus(target);
    },
    extents: () => atspi.extents(ref),
    isTopmostAt: (x, y) => isTopmostAt(lookup, ref, x, y),
    click: (x, y) => deps.click(x, y, { deadline }),
    isGone: isGoneError,
  };
}
