import {
  AppError,
  ConflictError,
  ValidationError,
  type KeyName,
  type ModifierName,
} from '@screenfleet/contracts';
import {
  assertBeforeDeadline,
  DeadlinePassedError,
  ElementGoneError,
  type Bounds,
  type Desktop,
  type UiElement,
} from '../desktop/desktop';
import { systemClock, type AgentClock } from './deadline';
import type { SnapshotStore } from './snapshots';

export interface PressByIndex extends ByIndex {
  key: KeyName;
  modifiers: ModifierName[];
}

const sameBounds = (a: Bounds, b: Bounds): boolean =>
  a.x === b.x && a.y === b.y && a.width === b.width && a.height === b.height;

/** What differs between the listed element and the element now; empty when it is the same. */
export function differences(listed: UiElement, now: UiElement): string[] {
  const changed: string[] = [];
  if (listed.role !== now.role) changed.push(`role '${listed.role}' -> '${now.role}'`);
  if (listed.name !== now.name) changed.push(`name '${listed.name}' -> '${now.name}'`);
  if (!sameBounds(listed.bounds, now.bounds)) changed.push('bounds moved');
  return changed;
}

/**
 * The element at the index of the current snapshot (which must be `cacheId` when given), or
 * 409 (no snapshot, expired, replaced) / 400 (out of range).
 */
export function elementAt(
  snapshots: SnapshotStore,
  index: number,
  now: number,
  cacheId?: string,
  requestedBy?: string,
): UiElement {
  const { elements, cacheId: current } = snapshots.current(now, cacheId, requestedBy);
  const element = elements[index];
  if (!element) {
    const range = elements.length === 0 ? 'it is empty' : `0 to ${elements.length - 1}`;
    throw new ValidationError(`element_index ${index} is out of range`, [
      {
        path: 'element_index',
        rule: 'maximum',
        detail: `element_index ${index} is not in listing ${current}: ${range}`,
      },
    ]);
  }
  return element;
}

/** Which listed element an action is for: its index in the listing, and the listing. */
export interface ByIndex {
  elementIndex: number;
  /** The listing the index was read from; undefined = the newest, if `requestedBy` made it. */
  cacheId?: string;
  /** The token of the request (the command's requested_by). */
  requestedBy?: string;
  /** Monotonic ms (the clock's `monotonic`) after which nothing may be done. */
  deadline?: number;
}

/**
 * The listed element, re-read from the desktop: gone or changed (role, name, bounds) is a 409
 * and nothing is done. Returns `step`, which runs one desktop call of the action: one that ran
 * out of time is the deadline's refusal, checked again right before it starts.
 */
async function checkedElement(
  desktop: Desktop,
  snapshots: SnapshotStore,
  target: ByIndex,
  clock: AgentClock,
) {
  const { deadline } = target;
  const now = clock.monotonic;
  const step = async <T>(what: string, action: () => Promise<T>): Promise<T> => {
    assertBeforeDeadline(deadline, now(), `before ${what}`);
    try {
      return await action();
    } catch (error) {
      if (!(error instanceof DeadlinePassedError)) assertBeforeDeadline(deadline, now(), what);
      throw error;
    }
  };
  const listed = elementAt(
    snapshots,
    target.elementIndex,
    clock.wall(),
    target.cacheId,
    target.requestedBy,
  );
  const current = await step('reading the element', () => desktop.describe(listed, { deadline }));
  if (!current) throw new ElementGoneError(listed);
  const changed = differences(listed, current);
  if (changed.length > 0) {
    throw new ConflictError(
      `the element at index ${target.elementIndex} changed since it was listed (${changed.join(', ')}): list the elements again`,
    );
  }
  /** The action itself, which may have done something when it fails: never re-read as late. */
  const act = async (what: string, action: () => Promise<void>): Promise<void> => {
    assertBeforeDeadline(deadline, now(), `before ${what}`);
    await action().catch((error: unknown) => failed(what, error));
  };
  const what = `element ${target.elementIndex} (${listed.role} '${listed.name}')`;
  return { listed, step, act, what };
}

/** A desktop failure that is not one of ours (409, 503, the deadline) is operation_failed. */
function failed(action: string, error: unknown): never {
  if (error instanceof AppError && error.code !== 'operation_failed') throw error;
  const reason = error instanceof Error ? error.message : String(error);
  throw new AppError('operation_failed', `${action} failed: ${reason}`, [], { cause: error });
}

/**
 * Presses a key on an element of the current listing: re-checks that the element is still the
 * one listed (gone or changed: 409, nothing pressed), focuses it, then presses; the Desktop
 * releases every modifier whatever happens. Each desktop call is bounded by the deadline, which
 * is checked again right before the focus (it may click) and the key press.
 */
export async function pressByIndex(
  desktop: Desktop,
  snapshots: SnapshotStore,
  press: PressByIndex,
  clock: AgentClock = systemClock,
): Promise<string> {
  const { deadline } = press;
  const { listed, step, act, what } = await checkedElement(desktop, snapshots, press, clock);
  await step('focusing the element', () => desktop.focus(listed, { deadline }));
  await act('the key press', () => desktop.pressKey(press.key, press.modifiers, { deadline }));
  return `pressed ${[...press.modifiers, press.key].join('+')} on ${what}`;
}

/**
 * Clicks the centre of an element of the current listing, re-checked as for a press; the
 * desktop refuses (409) when that point is off screen or something else is there.
 */
export async function clickByIndex(
  desktop: Desktop,
  snapshots: SnapshotStore,
  click: ByIndex,
  clock: AgentClock = systemClock,
): Promise<string> {
  const { deadline } = click;
  const { listed, act, what } = await checkedElement(desktop, snapshots, click, clock);
  await act('the click', () => desktop.click(listed, { deadline }));
  return `clicked ${what}`;
}

/**
 * Types text into an element of the current listing, re-checked as for a press; the desktop
 * focuses it, types, and checks the element's value afterwards.
 */
export async function typeByIndex(
  desktop: Desktop,
  snapshots: SnapshotStore,
  typing: ByIndex & { text: string },
  clock: AgentClock = systemClock,
): Promise<string> {
  const { deadline } = typing;
  const { listed, act, what } = await checkedElement(desktop, snapshots, typing, clock);
  await act('typing', () => desktop.typeText(listed, typing.text, { deadline }));
  return `typed ${Array.from(typing.text).length} characters into ${what}`;
}
