/**
 * Keeps our last key or click ahead of the next focus request. A focus request sent too soon
 * could reach the page before the key does (Chromium takes input to the page's main thread
 * through its compositor thread, and a focus request straight there), and the key would land
 * on the element focused next (README, "Keys and the next focus").
 */
import { monotonicNow, timeLeft } from '../../desktop';
import type { X11Connection } from '../x11/x11.connection';

export interface InputPacingOptions {
  /** The least wait after the application read our input (LinuxDesktopOptions.inputSettleMs). */
  inputSettleMs: number;
  /** How long to wait for the application's answer to the ping. */
  pingTimeoutMs: number;
  /** The longest settle a slow ping makes (a hung application is the next command's to find). */
  maxSettleMs: number;
}

export interface InputPacing {
  /**
   * Returns once the application with the keyboard focus has read the input sent so far (a
   * _NET_WM_PING answered), and sets when the next focus request may go (settled). The input
   * was delivered whatever this says: an application that does not answer in time (or by the
   * deadline: the answer must not be late) is not waited for longer.
   */
  taken(deadline: number | undefined): Promise<void>;
  /** Waits until the next focus request may go (at most until the deadline). */
  settled(deadline: number | undefined): Promise<void>;
  /** Typed text showed in the element: the next focus waits inputSettleMs from now. */
  typed(): void;
}

export function inputPacing(
  x11: () => Promise<X11Connection>,
  options: InputPacingOptions,
): InputPacing {
  const { inputSettleMs, pingTimeoutMs, maxSettleMs } = options;
  /**
   * When the next focus request may go (monotonic clock): after a key or click, inputSettleMs
   * after the application read it, or as long again as it took to answer the ping if that was
   * longer (its threads were waiting for a CPU: the renderer's are likely waiting too).
   */
  let focusAllowedAt = -Infinity;
  return {
    async taken(deadline) {
      const sent = monotonicNow();
      try {
        const wait = Math.min(pingTimeoutMs, timeLeft(deadline));
        if (wait > 0) await (await x11()).pingFocusedClient(wait);
      } catch {
        // Delivered all the same; a hung application fails the next command's own steps.
      } finally {
        const read = monotonicNow();
        focusAllowedAt = read + Math.min(Math.max(inputSettleMs, read - sent), maxSettleMs);
      }
    },
    async settled(deadline) {
      const wait = Math.min(focusAllowedAt - monotonicNow(), timeLeft(deadline));
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    },
    typed() {
      focusAllowedAt = monotonicNow() + inputSettleMs;
    },
  };
}
