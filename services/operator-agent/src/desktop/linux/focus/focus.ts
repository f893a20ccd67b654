/**
 * Desktop.focus on Linux: how an element gets keyboard focus. focusElement holds the decisions,
 * over its steps as an argument so that they can be tested without a desktop; focusOnAtspi runs
 * them on AT-SPI (GrabFocus and the events that answer it) and the input child (the fallback
 * click). A key may only go down once the element has focus in the application itself, and only
 * an event that came after our request says so:
 *
 * - GrabFocus answers before the page has moved its focus, and a state read after it can be
 *   stale: Chromium answers AT-SPI from its browser process's copy of the page's tree, which lags
 *   the page (after a Tab, the element left still said focused; a key sent then landed on the
 *   next input).
 * - So focus waits for the element's own "focused" event after GrabFocus. An element that
 *   reports focused already (truly, or as a stale report) would send none: in web content the
 *   focus first goes to the page's document, whose event comes after every earlier change of the
 *   page; then to the element, whose event then is ours. (Chromium itself clears and sets the
 *   focus again when asked to focus the focused element, so the page sees what it saw before.)
 *   Outside web content the application answers from its live state, which is believed.
 * - The element removed meanwhile (its removal event, or gone when asked) is ElementGoneError;
 *   an element that does not take focus is a ConflictError, except that a text field may be
 *   clicked at its centre when nothing else covers that point there (a click merely puts the
 *   caret in); a button would be activated by a click, so it never is.
 */
import { AppError, ConflictError } from '@screenfleet/contracts';
import {
  ElementGoneError,
  timeLeft,
  type Bounds,
  type CallOptions,
  type UiElement,
} from '../../desktop';
import {
  asRef,
  decodeRef,
  isGoneError,
  type AtspiClient,
  type ObjectRef,
} from '../atspi/atspi.client';
import { hasState, IFACE, STATE } from '../atspi/atspi.constants';
import type { IncomingMessage } from '../dbus/dbus.connection';
import { documentOf, liveStates } from '../element/element-state';
import { isTopmostAt } from '../element/hit-test';
import { clickOnlyFocuses } from '../listing/interactability';
import type { TreeCache } from '../listing/tree-cache';

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

export interface FocusSteps {
  /** Starts recording the application's focus and removal events (before any request). */
  record(): {
    next(which: 'element' | 'document', timeoutMs: number): Promise<FocusOutcome>;
    stop(): void;
  };
  /** Whether the element reports focused now (possibly stale). Throws gone errors. */
  reportsFocused(): Promise<boolean>;
  /** Whether the element is in web content (it has a document to move the focus to first). */
  inDocument(): Promise<boolean>;
  /** GrabFocus on the element or its document; false when the toolkit refused. */
  grabFocus(which: 'element' | 'document'): Promise<boolean>;
  /** The element's bounds now (gone errors thrown). */
  extents(): Promise<Bounds>;
  /** Whether the element (or a part of it) is what the application has at that screen point. */
  isTopmostAt(x: number, y: number): Promise<boolean>;
  click(x: number, y: number): Promise<void>;
  /** True for errors meaning the element or its app is gone. */
  isGone(error: unknown): boolean;
}

export interface FocusOptions {
  /** How long one wait for a focus event may take. */
  focusTimeoutMs: number;
  deadline?: number | undefined;
}

export async function focusElement(
  element: UiElement,
  steps: FocusSteps,
  options: FocusOptions,
): Promise<void> {
  const wait = () => Math.min(options.focusTimeoutMs, timeLeft(options.deadline));
  const gone = (error: unknown): never => {
    throw steps.isGone(error) ? new ElementGoneError(element) : error;
  };
  /** GrabFocus; an error but "gone" means this toolkit has none: as if it did not take. */
  const grab = (which: 'element' | 'document') =>
    steps.grabFocus(which).catch((error: unknown) => (steps.isGone(error) ? gone(error) : false));
  const events = steps.record();
  try {
    const [focusedNow, web] = await Promise.all([steps.reportsFocused(), steps.inDocument()]).catch(
      gone,
    );
    if (focusedNow && !web) return;
    // One request at a time: made together, the page may handle both before it tells its
    // browser process, which then sees no change and sends no event (seen under load).
    if (focusedNow && (await grab('document'))) {
      const outcome = await events.next('document', wait());
      if (outcome === 'gone') throw new ElementGoneError(element);
      // 'timeout': the document would not take focus; the element's own event may still come.
    }
    if (await grab('element')) {
      const outcome = await events.next('element', wait());
      if (outcome === 'focused') return;
      if (outcome === 'gone') throw new ElementGoneError(element);
    }
    await clickToFocus(element, steps, options, () => events.next('element', wait()));
  } finally {
    events.stop();
  }
}

/** The fallback: a click at the centre of a text field nothing covers, then its focus event. */
async function clickToFocus(
  element: UiElement,
  steps: FocusSteps,
  options: FocusOptions,
  focused: () => Promise<FocusOutcome>,
): Promise<void> {
  const refuse = (why: string) =>
    new ConflictError(
      `cannot focus the element '${element.name}' (${element.role}): ${why}; nothing was pressed`,
    );
  if (!clickOnlyFocuses(element.role)) {
    throw refuse('it did not take keyboard focus, and clicking it would activate it');
  }
  // Gone meanwhile (Chromium accepts GrabFocus on an element the page has just removed).
  const bounds = await steps.extents().catch((error: unknown) => {
    throw steps.isGone(error) ? new ElementGoneError(element) : error;
  });
  const x = Math.round(bounds.x + bounds.width / 2);
  const y = Math.round(bounds.y + bounds.height / 2);
  if (!(await steps.isTopmostAt(x, y))) {
    throw refuse('it did not take keyboard focus, and something else is at its centre');
  }
  if (timeLeft(options.deadline) <= 0) {
    throw new AppError(
      'operation_failed',
      `the element '${element.name}' did not take focus before the deadline: not clicked`,
    );
  }
  await steps.click(x, y);
  const outcome = await focused();
  if (outcome === 'gone') throw new ElementGoneError(element);
  if (outcome === 'timeout') throw refuse('it did not report focus after a click either');
}

/** focusElement's steps for one element, on AT-SPI and the input child. */
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

/** What a wait saw first: the object focused, the element removed, or neither in time. */
export type FocusOutcome = 'focused' | 'gone' | 'timeout';

interface FocusEvents {
  /**
   * Waits for `target` to report focused, or for `element` to be removed, in events recorded
   * since the previous wait returned (the first: since record()). Earlier events are dropped.
   */
  next(target: ObjectRef, timeoutMs: number): Promise<FocusOutcome>;
  stop(): void;
}

type Seen = { kind: 'focused' | 'removed'; path: string };

/** The event as focus or removal of an object of `app`, if it is one. */
function classify(signal: IncomingMessage, app: string): Seen | undefined {
  if (signal.sender !== app) return undefined;
  if (signal.interface === IFACE.cache && signal.member === 'RemoveAccessible') {
    return { kind: 'removed', path: asRef(signal.body[0]).path };
  }
  if (signal.interface !== IFACE.eventObject || signal.path === undefined) return undefined;
  const [detail, value, , data] = signal.body as [string, number, number, { value?: unknown }?];
  if (signal.member === 'StateChanged' && value === 1) {
    if (detail === 'focused') return { kind: 'focused', path: signal.path };
    if (detail === 'defunct') return { kind: 'removed', path: signal.path };
  }
  if (signal.member === 'ChildrenChanged' && String(detail).startsWith('remove') && data) {
    return { kind: 'removed', path: asRef(data.value).path };
  }
  return undefined;
}

/**
 * A recorder of `app`'s events: `subscribe` hands it every bus signal from now on, and returns
 * how to unsubscribe. `element` is the one a removal of which ends every wait.
 */
function recordFocusEvents(
  subscribe: (listener: (signal: IncomingMessage) => void) => () => void,
  element: ObjectRef,
): FocusEvents {
  const seen: Seen[] = [];
  let wake: (() => void) | undefined;
  const unsubscribe = subscribe((signal) => {
    const event = classify(signal, element.bus);
    if (!event) return;
    seen.push(event);
    wake?.();
  });

  return {
    async next(target, timeoutMs) {
      const deadline = performance.now() + timeoutMs;
      for (;;) {
        while (seen.length > 0) {
          const event = seen.shift() as Seen;
          if (event.kind === 'removed' && event.path === element.path) return 'gone';
          if (event.kind === 'focused' && event.path === target.path) return 'focused';
        }
        const left = deadline - performance.now();
        if (left <= 0) return 'timeout';
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, left);
          wake = () => {
            clearTimeout(timer);
            resolve();
          };
        });
        wake = undefined;
      }
    },
    stop: unsubscribe,
  };
}
