/**
 * The Desktop port on Linux: AT-SPI over D-Bus to read the UI and focus elements, nut-js
 * (XTest) for keys and, on text fields only, the fallback click.
 */
import { AppError, ConflictError } from '@screenfleet/contracts';
import {
  DesktopUnavailableError,
  ElementGoneError,
  monotonicNow,
  timeLeft,
  type Desktop,
  type ElementFilter,
  type ElementRef,
  type KeyName,
  type ListOptions,
  type ModifierName,
  type UiElement,
} from '../desktop';
import { TREE_EVENTS } from './listing/app-tree';
import {
  AtspiClient,
  decodeRef,
  isGoneError,
  unlessGone,
  type Extents,
  type ObjectRef,
} from './atspi/atspi.client';
import { hasState, IFACE, NULL_PATH, ROLE, ROOT_PATH, STATE } from './atspi/atspi.constants';
import { AtspiTreeReader } from './atspi/atspi.tree';
import { checkDesktop, type LinuxDesktopEnv } from './check-desktop';
import type { IncomingMessage } from './dbus/dbus.connection';
import { orderCandidates, type Candidate } from './listing/element-tree';
import { focusElement, type FocusSteps } from './input/focus';
import { recordFocusEvents } from './input/focus-events';
import { interactabilityOf } from './listing/interactability';
import { toNutKeys } from './input/keys';
import { nutInput, pressWithModifiers } from './input/nut.input';
import { TreeCache } from './listing/tree-cache';
import { openX11Connection, type X11Connection } from './x11/x11.connection';
import { x11Typer } from './x11/x11.keyboard';

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

/** Hit tests asked at most to get a settled answer (isTopmostAt). */
const HIT_TEST_TRIES = 6;

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
 * Checks the desktop first (DesktopUnavailableError with the reason when it cannot be driven),
 * then connects to the accessibility bus and starts the input child (nut-js).
 */
export async function createLinuxDesktop(options: LinuxDesktopOptions): Promise<Desktop> {
  const { env } = options;
  const callTimeoutMs = options.callTimeoutMs ?? 5000;
  const focusTimeoutMs = options.focusTimeoutMs ?? 1000;
  const typeSettleMs = options.typeSettleMs ?? 2000;
  const pingTimeoutMs = 1000;
  const inputSettleMs = options.inputSettleMs ?? 25;
  /** The longest settle a slow ping makes (a hung application is the next command's to find). */
  const maxSettleMs = 100;
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
  const reader = new AtspiTreeReader(client);
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
  const open = (): AtspiClient => {
    if (closed) throw new DesktopUnavailableError('The desktop connection is closed');
    return client;
  };

  /**
   * Reads the candidates' bounds into `into`, in one batch. Any error but "gone" (a hung app's
   * timeout) is thrown at once: asking again would only wait for it again.
   */
  const readBounds = async (
    atspi: AtspiClient,
    candidates: readonly Candidate[],
    into: BoundsByKey,
  ): Promise<void> => {
    if (candidates.length === 0) return;
    const boxes = await atspi.extentsOf(candidates.map((c) => c.node.ref));
    for (const box of boxes) if (box instanceof Error) unlessGone(box);
    candidates.forEach((c, i) => into.set(c.key, boxes[i] as Extents | Error));
  };

  /** What the tree cache compares between listings. */
  const listedBounds = (candidates: readonly Candidate[], bounds: BoundsByKey) =>
    new Map(candidates.map((c) => [c.key, sizedBounds(bounds.get(c.key))] as const));

  /**
   * The candidates' elements, from the bounds read in this listing and the role names learned
   * (an element gone, without a size, or of a role whose name could not be read since every
   * element with it is gone is left out). DOM ids are read here, on request only.
   */
  const toElements = async (
    atspi: AtspiClient,
    app: string,
    candidates: readonly Candidate[],
    bounds: BoundsByKey,
    options: ListOptions,
  ): Promise<UiElement[]> => {
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

  /**
   * When the next focus request may go (monotonic clock): after a key or click, inputSettleMs
   * after the application read it, or as long again as it took to answer the ping if that was
   * longer (its threads were waiting for a CPU: the renderer's are likely waiting too).
   */
  let focusAllowedAt = -Infinity;
  /**
   * Returns once the application with the keyboard focus has read the input sent so far (a
   * _NET_WM_PING answered), and sets when the next focus request may go (inputSettled). The
   * input was delivered whatever this says: an application that does not answer in time (or by
   * the deadline: the answer must not be late) is not waited for longer.
   */
  const inputTaken = async (deadline: number | undefined): Promise<void> => {
    const sent = monotonicNow();
    try {
      const wait = Math.min(pingTimeoutMs, timeLeft(deadline));
      if (wait > 0) await (await x11Connection()).pingFocusedClient(wait);
    } catch {
      // Delivered all the same; a hung application fails the next command's own steps.
    } finally {
      const read = monotonicNow();
      focusAllowedAt = read + Math.min(Math.max(inputSettleMs, read - sent), maxSettleMs);
    }
  };
  /**
   * Waits until the next focus request may go (at most until the deadline): one sent sooner
   * could reach the page before our last key or click does (Chromium takes input to the page's
   * main thread through its compositor thread, and a focus request straight there), and the
   * key would land on the element focused next.
   */
  const inputSettled = async (deadline: number | undefined): Promise<void> => {
    const wait = Math.min(focusAllowedAt - monotonicNow(), timeLeft(deadline));
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
  };

  /** Whether the point is inside the visible part of the element's web page, if it is in one. */
  const insideDocument = async (
    atspi: AtspiClient,
    ref: ObjectRef,
    x: number,
    y: number,
  ): Promise<boolean> => {
    const document = await documentOf(atspi, ref);
    if (!document) return true;
    const page = await atspi.extents(document);
    return x >= page.x && y >= page.y && x < page.x + page.width && y < page.y + page.height;
  };

  /**
   * Whether the application's hit test at the point finds the element or a part of it (a
   * button's label, say): no overlay of the page (a dialog, a cookie banner) covers it there.
   * Asked of its web page, or of the element itself outside one. Chromium answers a hit test
   * from its previous one and asks the page in the background (the first answer after the page
   * changed was the old one here), so it is asked until two answers 4 ms apart agree.
   */
  const isTopmostAt = async (
    atspi: AtspiClient,
    ref: ObjectRef,
    x: number,
    y: number,
  ): Promise<boolean> => {
    const root = (await documentOf(atspi, ref)) ?? ref;
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
  };

  /**
   * The web page (document) the element is in, not itself: from the tree of the latest listing,
   * else asked parent by parent.
   */
  const documentOf = async (atspi: AtspiClient, ref: ObjectRef): Promise<ObjectRef | undefined> => {
    const known = trees.documentAbove(ref);
    if (known !== undefined) return known ?? undefined;
    let node = await atspi.parent(ref);
    for (let depth = 0; depth < 64 && node.path !== ROOT_PATH && node.path !== NULL_PATH; depth++) {
      if ((await atspi.role(node)) === ROLE.documentWeb) return node;
      node = await atspi.parent(node);
    }
    return undefined;
  };

  /**
   * Reads an application's tree again in the background, once at a time: after a listing found
   * elements moved by a change the tree had from the events (what is showing may have changed
   * with them, which no event says), so that the next listing has it without a read on its way.
   */
  const refreshing = new Set<string>();
  const refreshSoon = (app: ObjectRef): void => {
    if (closed || refreshing.has(app.bus)) return;
    refreshing.add(app.bus);
    void trees
      .read(app, () => reader.nodes(app))
      .catch(() => undefined) // the next listing reads it, and says why if it fails again
      .finally(() => refreshing.delete(app.bus));
  };

  /**
   * The element's states, ElementGoneError when they say "defunct": Chromium answers a moment
   * for an element the page has removed (role invalid, extents nowhere, GrabFocus refused), and
   * only then forgets it. Read as a live element it would be refused as covered (a conflict),
   * not named gone (seen once in CI, after describe() had returned null).
   */
  const liveStates = async (atspi: AtspiClient, ref: ObjectRef, element: UiElement) => {
    const states = await atspi.states(ref);
    if (hasState(states, STATE.defunct)) throw new ElementGoneError(element);
    return states;
  };

  /** focus.ts's steps for one element, on AT-SPI and the input child. */
  const focusSteps = (element: UiElement, deadline: number | undefined): FocusSteps => {
    const atspi = open().bounded(timeLeft(deadline));
    const ref = decodeRef(element.ref);
    let document: Promise<ObjectRef | undefined> | undefined;
    const documentRef = () => (document ??= documentOf(atspi, ref));
    return {
      record: () => {
        const events = recordFocusEvents(subscribe, ref);
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
        await inputSettled(deadline);
        return atspi.grabFocus(target);
      },
      extents: () => atspi.extents(ref),
      isTopmostAt: (x, y) => isTopmostAt(atspi, ref, x, y),
      click: (x, y) => input.click(x, y, { deadline }),
      isGone: isGoneError,
    };
  };

  return {
    async listElements(filter, options = {}) {
      const atspi = open();
      const apps = await atspi.applications();
      trees.keepOnly(new Set(apps.map((app) => app.bus)));
      const perApp = await Promise.all(apps.map((app) => appElements(atspi, app, filter, options)));
      return perApp.flat();
    },

    async describe(element, options = {}) {
      const atspi = open().bounded(timeLeft(options.deadline));
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
    },

    async focus(element, options = {}) {
      await focusElement(element, focusSteps(element, options.deadline), {
        focusTimeoutMs,
        deadline: options.deadline,
      });
    },

    async click(element, options = {}) {
      const atspi = open().bounded(timeLeft(options.deadline));
      const ref = decodeRef(element.ref);
      const [states, bounds] = await Promise.all([
        liveStates(atspi, ref, element),
        atspi.extents(ref),
      ]).catch((error: unknown) => {
        throw isGoneError(error) ? new ElementGoneError(element) : error;
      });
      const x = Math.round(bounds.x + bounds.width / 2);
      const y = Math.round(bounds.y + bounds.height / 2);
      const refuse = (why: string) =>
        new ConflictError(
          `not clicking the element '${element.name}' (${element.role}): ${why}; nothing was clicked`,
        );
      const screen = (await x11Connection()).setup;
      const onScreen =
        hasState(states, STATE.showing) &&
        x >= 0 &&
        y >= 0 &&
        x < screen.screenWidth &&
        y < screen.screenHeight &&
        (await insideDocument(atspi, ref, x, y));
      if (!onScreen) throw refuse(`its centre (${x}, ${y}) is not on the screen`);
      if (!(await isTopmostAt(atspi, ref, x, y))) {
        throw refuse(`something else is at its centre (${x}, ${y})`);
      }
      await input.click(x, y, { deadline: options.deadline });
      await inputTaken(options.deadline);
    },

    async typeText(element, text, options = {}) {
      const atspi = open().bounded(timeLeft(options.deadline));
      const ref = decodeRef(element.ref);
      const chars = Array.from(text);
      // The text is checked against the keymap (an X round trip) while the element is checked.
      const typer = x11Typer(await x11Connection());
      const [[states, interfaces]] = await Promise.all([
        Promise.all([liveStates(atspi, ref, element), atspi.interfaces(ref)]).catch(
          (error: unknown) => {
            throw isGoneError(error) ? new ElementGoneError(element) : error;
          },
        ),
        typer.check(chars),
      ]);
      if (!hasState(states, STATE.editable) || !interfaces.includes(IFACE.text)) {
        throw new ConflictError(
          `the element '${element.name}' (${element.role}) takes no text; nothing was typed`,
        );
      }
      if (hasState(states, STATE.singleLine) && /[\n\t]/.test(text)) {
        throw new ConflictError(
          `the element '${element.name}' is a single-line text field: a line break or tab in the text would leave it (press enter or tab with press-key-by-index instead); nothing was typed`,
        );
      }
      await focusElement(element, focusSteps(element, options.deadline), {
        focusTimeoutMs,
        deadline: options.deadline,
      });
      const before = await atspi.textState(ref);
      const [start, end] = before.selection ?? [before.caret, before.caret];
      const kept = Array.from(before.text);
      const expected = (typed: number) =>
        [...kept.slice(0, start), ...chars.slice(0, typed), ...kept.slice(end)].join('');
      let shown = before.text;
      const settled = async (typed: number) => {
        const settleBy =
          performance.now() + Math.min(typeSettleMs + chars.length, timeLeft(options.deadline));
        while ((shown = await atspi.text(ref)) !== expected(typed)) {
          if (performance.now() > settleBy) {
            throw new AppError(
              'operation_failed',
              `typed ${typed} of ${chars.length} characters into '${element.name}', but it shows ${JSON.stringify(shown)}, not ${JSON.stringify(expected(typed))}`,
            );
          }
          await new Promise((resolve) => setTimeout(resolve, 2));
        }
      };
      try {
        await input.exclusive(() => typer.type(chars, { deadline: options.deadline, settled }));
      } finally {
        // The page shows the text: it has the keys, but a last key release may still be on its
        // way; the next focus waits as after a press. (Not from a ping after the keys, as a
        // press does: the browser answers it once it has handled every key, 38 ms p50 and
        // 165 ms p95 after 20 characters here, and the press rule then waits as long again.)
        focusAllowedAt = monotonicNow() + inputSettleMs;
      }
    },

    async pressKey(key: KeyName, modifiers: ModifierName[], options = {}) {
      open();
      const keys = toNutKeys(key, modifiers);
      await input.withKeyboard(
        (keyboard) => pressWithModifiers(keyboard, keys.key, keys.modifiers),
        options,
      );
      await inputTaken(options.deadline);
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
