import {
  AppError,
  ConflictError,
  ValidationError,
  type KeyName,
  type ModifierName,
} from '@screenfleet/contracts';
import { ElementGoneError, type Bounds, type Desktop, type UiElement } from '../desktop';
import {
  assertBeforeDeadline,
  DeadlinePassedError,
  systemClock,
  type AgentClock,
} from './deadline';
import type { SnapshotStore } from './snapshots';

export interface PressByIndex {
  elementIndex: number;
  /** The listing the index was read from; undefined = the newest, if `requestedBy` made it. */
  cacheId?: string;
  /** The token of the press (the command's requested_by). */
  requestedBy?: string;
  key: KeyName;
  modifiers: ModifierName[];
  /** Monotonic ms (the clock's `monotonic`) after which nothing may be pressed. */
  deadline?: number;
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
  const now = clock.monotonic;
  /** A step that failed because it ran out of time is the deadline's refusal, not a failure. */
  const step = async <T>(what: string, action: () => Promise<T>): Promise<T> => {
    try {
      return await action();
    } catch (error) {
      if (!(error instanceof DeadlinePassedError)) assertBeforeDeadline(deadline, now(), what);
      throw error;
    }
  };

  const listed = elementAt(
    snapshots,
    press.elementIndex,
    clock.wall(),
    press.cacheId,
    press.requestedBy,
  );
  const current = await step('reading the element', () => desktop.describe(listed, { deadline }));
  if (!current) throw new ElementGoneError(listed);
  const changed = differences(listed, current);
  if (changed.length > 0) {
    throw new ConflictError(
      `the element at index ${press.elementIndex} changed since it was listed (${changed.join(', ')}): list the elements again`,
    );
  }
  assertBeforeDeadline(deadline, now(), 'before focusing the element');
  await step('focusing the element', () => desktop.focus(listed, { deadline }));
  assertBeforeDeadline(deadline, now(), 'before the key press');
  try {
    await desktop.pressKey(press.key, press.modifiers, { deadline });
  } catch (error) {
    if (error instanceof AppError && error.code !== 'operation_failed') throw error;
    const reason = error instanceof Error ? error.message : String(error);
    throw new AppError('operation_failed', `the key press failed: ${reason}`, [], {
      cause: error,
    });
  }
  const combo = [...press.modifiers, press.key].join('+');
  return `pressed ${combo} on element ${press.elementIndex} (${listed.role} '${listed.name}')`;
}
