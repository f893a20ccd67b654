import { DesktopUnavailableError, type Desktop } from '../desktop/desktop';

/**
 * Stands in for the desktop when the pre-flight check failed: the agent still connects and
 * answers every command with desktop_unavailable (503) and the reason, instead of crashing.
 */
export function unavailableDesktop(reason: string): Desktop {
  const refuse = (): Promise<never> => Promise.reject(new DesktopUnavailableError(reason));
  return {
    listElements: refuse,
    focus: refuse,
    describe: refuse,
    pressKey: refuse,
    click: refuse,
    typeText: refuse,
    close: () => Promise.resolve(),
  };
}
