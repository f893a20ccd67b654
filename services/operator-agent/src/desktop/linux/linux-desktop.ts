/**
 * The Desktop port on Linux: AT-SPI over D-Bus to read the UI and focus elements, nut-js
 * (XTest) for keys and clicks, the agent's own X connection for typing text. This file opens
 * those and assembles the Desktop from one module per action (listing/, element/, focus/,
 * input/); closing it closes them.
 */
import { DesktopUnavailableError, timeLeft, type Desktop, type UiElement } from '../desktop';
import { AtspiClient } from './atspi/atspi.client';
import { AtspiTreeReader } from './atspi/atspi.tree';
import { checkDesktop, type LinuxDesktopEnv } from './check-desktop';
import type { IncomingMessage } from './dbus/dbus.connection';
import { describeElement } from './element/element-state';
import { focusOnAtspi } from './focus/focus';
import { clickElement } from './input/click';
import { inputPacing } from './input/input-pacing';
import { nutInput } from './input/nut.input';
import { pressKey } from './input/keys';
import { typeIntoElement } from './input/type-text';
import { TREE_EVENTS } from './listing/app-tree';
import { elementLister } from './listing/list-elements';
import { TreeCache } from './listing/tree-cache';
import { openX11Connection, type X11Connection } from './x11/x11.connection';

export interface LinuxDesktopOptions {
  /** DISPLAY and DBUS_SESSION_BUS_ADDRESS of the desktop (plus XAUTHORITY when needed). */
  env: LinuxDesktopEnv;
  /** Per D-Bus call; a hung application must not hang the agent. Default 5000. */
  callTimeoutMs?: number;
  /**
   * How long focus() waits for the element's focus event before it falls back to a click (text
   * fields only). Default 1000.
   */
  focusTimeoutMs?: number;
  /**
   * How long typeText() waits for the element to show what was typed, beyond a millisecond per
   * character. Default 2000.
   */
  typeSettleMs?: number;
  /** For the pre-flight check. Default 3000. */
  checkTimeoutMs?: number;
  /**
   * How long after an application read a key or click of ours (answered our ping) the next
   * focus request waits at least, so that the input is inside the page before the focus moves;
   * longer when the ping itself took longer (a starved browser). Only commands that follow at
   * once pay it (README, "Keys and the next focus"). Default 25.
   */
  inputSettleMs?: number;
}

/**
 * Checks the desktop first (DesktopUnavailableError with the reason when it cannot be driven),
 * then connects to the accessibility bus and starts the input child (nut-js).
 */
export async function createLinuxDesktop(options: LinuxDesktopOptions): Promise<Desktop> {
  const { env } = options;
  const callTimeoutMs = options.callTimeoutMs ?? 5000;
  const check = await checkDesktop(env, { timeoutMs: options.checkTimeoutMs ?? 3000 });
  if (!check.ok) throw new DesktopUnavailableError(check.reason);
  let client: AtspiClient;
  try {
    client = await AtspiClient.connect(env.DBUS_SESSION_BUS_ADDRESS ?? '', callTimeoutMs, {
      events: TREE_EVENTS,
    });
  } catch (error) {
    throw new DesktopUnavailableError('Cannot connect to the accessibility bus', { cause: error });
  }
  const trees = new TreeCache();
  /** Who else hears the bus's signals (a focus() under way). */
  const listeners = new Set<(signal: IncomingMessage) => void>();
  client.onSignal((signal) => {
    trees.onSignal(signal);
    for (const listener of listeners) listener(signal);
  });
  const subscribe = (listener: (signal: IncomingMessage) => void) => {
    listeners.add(listener);
    return () => listeners.delete(listener);
  };
  const input = nutInput({ ...env });
  // Started now, not on the first press: loading nut-js takes up to seconds, which a press's
  // deadline does not have. Its start releases every modifier a previous agent may have left.
  try {
    await input.start();
  } catch (error) {
    client.close();
    input.close();
    throw error;
  }
  let closed = false;
  /** This desktop's own X connection for typing text, opened on first use. */
  let x11: Promise<X11Connection> | undefined;
  const x11Connection = async (): Promise<X11Connection> => {
    const open = x11 && (await x11.catch(() => undefined));
    if (open && !open.closed) return open;
    x11 = openX11Connection(env, 3000);
    return x11.catch((error: unknown) => {
      throw new DesktopUnavailableError('Cannot open the X display for typing', { cause: error });
    });
  };
  const assertOpen = (): void => {
    if (closed) throw new DesktopUnavailableError('The desktop connection is closed');
  };
  /** The AT-SPI client, each call bounded by the deadline; refused once the desktop closed. */
  const atspi = (deadline?: number): AtspiClient => {
    assertOpen();
    return client.bounded(timeLeft(deadline));
  };
  const pacing = inputPacing(x11Connection, {
    inputSettleMs: options.inputSettleMs ?? 25,
    pingTimeoutMs: 1000,
    maxSettleMs: 100,
  });
  const focus = (element: UiElement, deadline: number | undefined) =>
    focusOnAtspi(
      {
        atspi,
        trees,
        subscribe,
        inputSettled: (by) => pacing.settled(by),
        click: (x, y, callOptions) => input.click(x, y, callOptions),
        focusTimeoutMs: options.focusTimeoutMs ?? 1000,
      },
      element,
      deadline,
    );
  const actions = { atspi, trees, input, pacing, x11: x11Connection };

  return {
    listElements: elementLister({
      atspi,
      trees,
      reader: new AtspiTreeReader(client),
      isClosed: () => closed,
    }),
    describe: async (element, { deadline } = {}) => describeElement(atspi(deadline), element),
    focus: async (element, { deadline } = {}) => focus(element, deadline),
    click: async (element, { deadline } = {}) => clickElement(actions, element, deadline),
    typeText: async (element, text, { deadline } = {}) =>
      typeIntoElement(
        { ...actions, focus, typeSettleMs: options.typeSettleMs ?? 2000 },
        element,
        text,
        deadline,
      ),
    pressKey: async (key, modifiers, callOptions = {}) => {
      assertOpen();
      await pressKey(actions, key, modifiers, callOptions);
    },

    close() {
      if (!closed) {
        closed = true;
        client.close();
        input.close();
        void x11?.then(
          (connection) => connection.close(),
          () => undefined,
        );
      }
      return Promise.resolve();
    },
  };
}
