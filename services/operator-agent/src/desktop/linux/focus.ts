/**
 * How an element gets keyboard focus on Linux, apart from AT-SPI and X so that the decision
 * (when a click is allowed) can be tested without a desktop.
 */
import { AppError, ConflictError } from '@screenfleet/contracts';
import { ElementGoneError, timeLeft, type Bounds, type UiElement } from '../desktop';
import { clickOnlyFocuses } from './interactability';

export interface FocusSteps {
  /** GrabFocus, then wait up to `waitMs` for the focused state; false when it did not take. */
  grabFocus(waitMs: number): Promise<boolean>;
  /** The element's bounds now. */
  extents(): Promise<Bounds>;
  click(x: number, y: number): Promise<void>;
  /** True for errors meaning the element or its app is gone. */
  isGone(error: unknown): boolean;
}

/**
 * GrabFocus and wait for the focused state (GrabFocus answers before the page has moved its
 * focus: a key sent right away could land on the previously focused element). When that fails
 * (some toolkits do not implement GrabFocus), click the element's centre, but only where a click
 * merely focuses it; a button would be activated before any key, so it is a 409 instead. Nothing
 * is clicked once the deadline has passed.
 */
export async function focusElement(
  element: UiElement,
  steps: FocusSteps,
  options: { focusTimeoutMs: number; deadline?: number | undefined },
): Promise<void> {
  try {
    if (await steps.grabFocus(Math.min(options.focusTimeoutMs, timeLeft(options.deadline)))) {
      return;
    }
  } catch (error) {
    if (steps.isGone(error)) throw new ElementGoneError(element);
    // No GrabFocus, or it failed: a click may still focus (below).
  }
  if (!clickOnlyFocuses(element.role)) {
    throw new ConflictError(
      `cannot focus the element '${element.name}' (${element.role}): it did not take keyboard focus, and clicking it would activate it; nothing was pressed`,
    );
  }
  let bounds = element.bounds;
  try {
    bounds = await steps.extents();
  } catch (error) {
    if (steps.isGone(error)) throw new ElementGoneError(element);
    // The listed bounds were checked by describe() just before.
  }
  if (timeLeft(options.deadline) <= 0) {
    throw new AppError(
      'operation_failed',
      `the element '${element.name}' did not take focus before the deadline: not clicked`,
    );
  }
  await steps.click(
    Math.round(bounds.x + bounds.width / 2),
    Math.round(bounds.y + bounds.height / 2),
  );
}
