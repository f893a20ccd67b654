/**
 * The Desktop port on Linux: AT-SPI over D-Bus to read the UI and focus elements, nut-js
 * (XTest) for keys and, on text fields only, the fallback click.
 */
import {
  DesktopUnavailableError,
  timeLeft,
  type Desktop,
  type ElementFilter,
  type ElementRef,
  type KeyName,
  type ListOptions,
  type ModifierName,
  type UiElement,
} from '../desktop';
import { AtspiClient, isGoneError, type Extents, type ObjectRef } from './atspi.client';
import { ROLE, STATE } from './atspi.constants';
import { AtspiTreeReader } from './atspi.tree';
import { checkDesktop, type LinuxDesktopEnv } from './check-desktop';
import { hasState, orderCandidates, refKey, type Candidate } from './element-tree';
import { TreeCache } from './tree-cache';
import { focusElement } from './focus';
import { interactabilityOf } from './interactability';
import { toNutKeys } from './keys';
import { nutInput, pressWithModifiers } from './nut.input';

export interface LinuxDesktopOptions {
  /** DISPLAY and DBUS_SESSION_BUS_ADDRESS of the desktop (plus XAUTHORITY when needed). */
  env: LinuxDesktopEnv;
  /** Per D-Bus call; a hung application must not hang the agent. Default 5000. */
  callTimeoutMs?: number;
  /**
   * How long focus() waits for the element to report focused before it falls back to a click
   * (text fields only). Default 1000.
   */
  focusTimeoutMs?: number;
  /** For the pre-flight check. Default 3000. */
  checkTimeoutMs?: number;
}

export function encodeRef(ref: ObjectRef): ElementRef {
  return refKey(ref) as ElementRef;
}

/** Bus names never contain '/', object paths always start with it. */
export function decodeRef(ref: ElementRef): ObjectRef {
  const slash = ref.indexOf('/');
  if (slash <= 0) throw new Error(`Not a Linux element reference: '${ref}'`);
  return { bus: ref.slice(0, slash), path: ref.slice(slash) };
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

/** A gone object reads as null; any other error is thrown. */
function unlessGone(error: unknown): null {
  if (isGoneError(error)) return null;
  throw error;
}

async function waitFocused(
  atspi: AtspiClient,
  ref: ObjectRef,
  timeoutMs: number,
): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (hasState(await atspi.states(ref), STATE.focused)) return true;
    if (Date.now() > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
}

/**
 * Checks the desktop first (DesktopUnavailableError with the reason when it cannot be driven),
 * then connects to the accessibility bus and starts the input child (nut-js).
 */
export async function createLinuxDesktop(options: LinuxDesktopOptions): Promise<Desktop> {
  const { env } = options;
  const callTimeoutMs = options.callTimeoutMs ?? 5000;
  const focusTimeoutMs = options.focusTimeoutMs ?? 1000;
  const check = await checkDesktop(env, { timeoutMs: options.checkTimeoutMs ?? 3000 });
  if (!check.ok) throw new DesktopUnavailableError(check.reason);
  let client: AtspiClient;
  try {
    client = await AtspiClient.connect(env.DBUS_SESSION_BUS_ADDRESS ?? '', callTimeoutMs, {
      watchChanges: true,
    });
  } catch (error) {
    throw new DesktopUnavailableError('Cannot connect to the accessibility bus', { cause: error });
  }
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
  const trees = new TreeCache();
  let closed = false;
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
   * One application's elements. Its tree comes from the cache while the application sent no
   * event that may change it (tree-cache.ts); the bounds are read every time, and one that moved
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
      const readTree = async () => {
        const changes = atspi.changeCount(app.bus);
        const candidates = orderCandidates(app, await reader.nodes(app));
        trees.save(app.bus, changes, candidates);
        return candidates.filter(inWindow);
      };
      const bounds: BoundsByKey = new Map();
      const cached = atspi.tracksChanges
        ? trees.get(app.bus, atspi.changeCount(app.bus))?.filter(inWindow)
        : undefined;
      // Role names are learned alongside the bounds: once per role, so mostly nothing to ask.
      const learnRoles = (candidates: readonly Candidate[]) =>
        atspi.learnRoleNames(candidates.map((c) => c.node));
      if (cached !== undefined) {
        await Promise.all([readBounds(atspi, cached, bounds), learnRoles(cached)]);
        if (trees.record(app.bus, listedBounds(cached, bounds), true)) {
          return await toElements(atspi, appName, cached, bounds, options);
        }
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
      const atspi = open().bounded(timeLeft(options.deadline));
      const ref = decodeRef(element.ref);
      await focusElement(
        element,
        {
          grabFocus: async (waitMs) =>
            (await atspi.grabFocus(ref)) && (await waitFocused(atspi, ref, waitMs)),
          extents: () => atspi.extents(ref),
          click: (x, y) => input.click(x, y, { deadline: options.deadline }),
          isGone: isGoneError,
        },
        { focusTimeoutMs, deadline: options.deadline },
      );
    },

    async pressKey(key: KeyName, modifiers: ModifierName[], options = {}) {
      open();
      const keys = toNutKeys(key, modifiers);
      await input.withKeyboard(
        (keyboard) => pressWithModifiers(keyboard, keys.key, keys.modifiers),
        options,
      );
    },

    close() {
      if (!closed) {
        closed = true;
        client.close();
        input.close();
      }
      return Promise.resolve();
    },
  };
}
