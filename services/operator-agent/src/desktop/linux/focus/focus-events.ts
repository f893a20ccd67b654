/**
 * The focus and removal events of one application, recorded from a moment on, for focus.ts to
 * wait on: "this element reports focused" is believed only as an event that came after our
 * request. A state read can be stale: Chromium's browser process answers AT-SPI from its copy of
 * the page's tree, which lags the page (after a Tab, the element left still said focused).
 */
import type { ObjectRef } from '../atspi/atspi.client';
import { asRef } from '../atspi/atspi.client';
import { IFACE } from '../atspi/atspi.constants';
import type { IncomingMessage } from '../dbus/dbus.connection';

/** What a wait saw first: the object focused, the element removed, or neither in time. */
export type FocusOutcome = 'focused' | 'gone' | 'timeout';

export interface FocusEvents {
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
export function recordFocusEvents(
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
