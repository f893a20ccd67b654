/**
 * Desktop.typeText on Linux: the element must take text (editable, with the Text interface;
 * no line break or tab into a single-line field), is focused, and the text is typed through
 * this desktop's own X connection (x11.keyboard.ts), then read back from the element.
 */
import { AppError, ConflictError } from '@screenfleet/contracts';
import { timeLeft, type UiElement } from '../../desktop';
import { decodeRef, type AtspiClient } from '../atspi/atspi.client';
import { hasState, IFACE, STATE } from '../atspi/atspi.constants';
import { liveStates, throwAsGone } from '../element/element-state';
import type { X11Connection } from '../x11/x11.connection';
import { x11Typer } from '../x11/x11.keyboard';
import type { InputPacing } from './input-pacing';
import type { NutInput } from './nut.input';

export interface TypeTextDeps {
  /** The AT-SPI client bounded by the deadline (DesktopUnavailableError once closed). */
  atspi(deadline: number | undefined): AtspiClient;
  /** Desktop.focus. */
  focus(element: UiElement, deadline: number | undefined): Promise<void>;
  /** Typing runs in the input child's queue, never between its keys and clicks. */
  input: Pick<NutInput, 'exclusive'>;
  pacing: Pick<InputPacing, 'typed'>;
  x11(): Promise<X11Connection>;
  /**
   * How long to wait for the element to show what was typed, beyond a millisecond per
   * character (LinuxDesktopOptions.typeSettleMs).
   */
  typeSettleMs: number;
}

export async function typeIntoElement(
  deps: TypeTextDeps,
  element: UiElement,
  text: string,
  deadline: number | undefined,
): Promise<void> {
  const atspi = deps.atspi(deadline);
  const ref = decodeRef(element.ref);
  const chars = Array.from(text);
  // The text is checked against the keymap (an X round trip) while the element is checked.
  const typer = x11Typer(await deps.x11());
  const [[states, interfaces]] = await Promise.all([
    Promise.all([liveStates(atspi, ref, element), atspi.interfaces(ref)]).catch(
      throwAsGone(element),
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
  await deps.focus(element, deadline);
  const before = await atspi.textState(ref);
  const [start, end] = before.selection ?? [before.caret, before.caret];
  const kept = Array.from(before.text);
  const expected = (typed: number) =>
    [...kept.slice(0, start), ...chars.slice(0, typed), ...kept.slice(end)].join('');
  let shown = before.text;
  const settled = async (typed: number) => {
    const settleBy =
      performance.now() + Math.min(deps.typeSettleMs + chars.length, timeLeft(deadline));
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
    await deps.input.exclusive(() => typer.type(chars, { deadline, settled }));
  } finally {
    // The page shows the text: it has the keys, but a last key release may still be on its
    // way; the next focus waits as after a press. (Not from a ping after the keys, as a
    // press does: the browser answers it once it has handled every key, 38 ms p50 and
    // 165 ms p95 after 20 characters here, and the press rule then waits as long again.)
    deps.pacing.typed();
  }
}
