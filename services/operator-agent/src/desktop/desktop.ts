/**
 * The Desktop port: what the operator agent needs from the desktop it runs on. Nothing here is
 * specific to one platform; Linux (AT-SPI + nut-js) is the first adapter, macOS AX and Windows
 * UI Automation fit the same shape (a tree of accessible elements with a role, a name, screen
 * bounds and a focus action; synthetic key events).
 */
import {
  ConflictError,
  TimeoutError,
  type Interactability as ContractInteractability,
  type KeyName,
  type ModifierName,
} from '@screenfleet/contracts';

/** Screen coordinates in pixels, origin at the top-left of the primary screen. */
export interface Bounds {
  x: number;
  y: number;
  width: number;
  height: number;
}

/** 'definite' | 'sometimes' | 'none', as the listing answers it (libs/contracts). */
export type Interactability = ContractInteractability;

/**
 * The clock deadlines are read on: monotonic milliseconds (performance.now), so neither clock
 * skew between machines nor a wall-clock step (NTP) moves a deadline.
 */
export const monotonicNow = (): number => performance.now();

/**
 * Bounds one desktop call by the caller's deadline (monotonicNow's clock): the adapter waits no
 * longer than that and starts nothing visible (a click, a key going down) once it has passed.
 */
export interface CallOptions {
  deadline?: number | undefined;
}

/** Milliseconds left before the deadline (never negative); Infinity without one. */
export function timeLeft(deadline: number | undefined, now = monotonicNow()): number {
  return deadline === undefined ? Infinity : Math.max(0, deadline - now);
}

/** The command's deadline passed before it was done: nothing (more) was pressed. Code 'timeout'. */
export class DeadlinePassedError extends TimeoutError {}

/** DeadlinePassedError when `now` is past the deadline. */
export function assertBeforeDeadline(
  deadline: number | undefined,
  now: number,
  what: string,
): void {
  if (deadline !== undefined && now > deadline) {
    throw new DeadlinePassedError(
      `${what}: ${Math.round(now - deadline)} ms past its deadline, not executed (nothing pressed)`,
    );
  }
}

/**
 * An element reference, opaque outside the adapter that made it (on Linux the application's
 * unique bus name followed by the object path). Valid until the element or its app goes away.
 */
export type ElementRef = string & { readonly __elementRef: never };

export interface UiElement {
  /** The platform's role name, lower case ('push button', 'entry', 'AXButton' ...). */
  role: string;
  /** The accessible name (the label a user reads). */
  name: string;
  bounds: Bounds;
  /** The application's accessible name ('Chromium', 'gedit' ...). */
  app: string;
  /** The title of the top-level window the element belongs to ('' when unknown). */
  window: string;
  ref: ElementRef;
  interactability: Interactability;
  /** The DOM id when the element belongs to a web page and has one (ListOptions.domIds). */
  domId?: string;
}

export interface ElementFilter {
  /** The application's name, compared case-insensitively as a whole. */
  appName?: string;
  /** Part of the window title, compared case-insensitively. */
  windowName?: string;
}

export interface ListOptions {
  /**
   * Also read each element's DOM id (UiElement.domId): one more desktop call per element, so
   * for tests and diagnostics; the agent's listing does not return it.
   */
  domIds?: boolean;
}

export type { KeyName, ModifierName } from '@screenfleet/contracts';
export { DesktopUnavailableError } from '@screenfleet/contracts';

export interface Desktop {
  /**
   * Every interactable element (focusable, showing, with screen bounds) of the matching apps
   * and windows, in a stable order: apps as the platform lists them, then document order.
   * Callers address elements by their index in this full list.
   */
  listElements(filter: ElementFilter, options?: ListOptions): Promise<UiElement[]>;
  /**
   * Gives the element keyboard focus. Where the platform will not, it may click the element,
   * but only where a click merely focuses it (text fields); anything else (a button, which a
   * click would activate) is a ConflictError "cannot focus the element" and nothing happens.
   */
  focus(element: UiElement, options?: CallOptions): Promise<void>;
  /** The element as it is now (role, name, bounds), or null when it is gone. */
  describe(element: UiElement, options?: CallOptions): Promise<UiElement | null>;
  /**
   * Holds the modifiers, presses and releases the key, then releases every modifier, also when
   * the press fails. Names are canonical (libs/contracts keys.ts); anything else is refused
   * (ValidationError) before a key goes down. Presses never interleave: concurrent calls run one
   * after the other. No key goes down once the deadline has passed (DeadlinePassedError);
   * releases always go.
   */
  pressKey(key: KeyName, modifiers: ModifierName[], options?: CallOptions): Promise<void>;
  /**
   * One left click at the element's centre, only when that point is on the screen and the
   * element (or a part of it) is what the application shows there: else a ConflictError and
   * nothing is clicked. Nothing is clicked after the deadline.
   */
  click(element: UiElement, options?: CallOptions): Promise<void>;
  /**
   * Focuses the element (as focus() does) and types the text as key presses, then reads the
   * element's value back: it must be what it was with the text put in at the caret (replacing
   * a selection), else an `operation_failed` error that says what the element shows. Refused
   * (ConflictError, nothing typed) when the element takes no text, or is a single-line field and
   * the text has a line break or tab. A character the desktop cannot type is a ValidationError
   * before anything is typed. No key goes down after the deadline; Shift is always released.
   */
  typeText(element: UiElement, text: string, options?: CallOptions): Promise<void>;
  close(): Promise<void>;
}

/** The answer of a platform's pre-flight check: can this process drive the desktop? */
export type DesktopCheck = { ok: true } | { ok: false; reason: string };

/** The element no longer exists (its window closed, the page removed it, the app restarted). */
export class ElementGoneError extends ConflictError {
  constructor(readonly element: Pick<UiElement, 'role' | 'name' | 'ref'>) {
    super(`The element '${element.name}' (${element.role}) is gone`);
  }
}
