import type {
  CallOptions,
  Desktop,
  ElementRef,
  KeyName,
  ModifierName,
  UiElement,
} from '@screenfleet/operator-agent';

export interface RecordedPress {
  key: KeyName;
  modifiers: ModifierName[];
  /** The name of the element focused before the press. */
  element?: string;
}

/**
 * A Desktop whose every app has `count` elements named "<app> field <i>", recording every key
 * press and the element focused for it, for broker-level tests that are about who may press and
 * when, not about X. `holdPresses()` makes the next presses wait until `release()`, so a test
 * can act while a press is in flight.
 */
export function fakeDesktop(count = 5) {
  const elementsOf = (app: string): UiElement[] =>
    Array.from({ length: count }, (_, i) => ({
      role: 'entry',
      name: `${app} field ${i}`,
      bounds: { x: 10, y: 10 + i * 30, width: 100, height: 20 },
      app,
      window: `${app} window`,
      ref: `:1.1/${app}/${i}` as ElementRef,
      interactability: 'definite',
    }));
  let focused: string | undefined;
  const presses: RecordedPress[] = [];
  const clicks: string[] = [];
  const typed: Array<{ element: string; text: string }> = [];
  let gate: Promise<void> | undefined;
  let open: (() => void) | undefined;
  let pressStarted: (() => void) | undefined;

  const desktop: Desktop = {
    listElements: (filter) => Promise.resolve(elementsOf(filter.appName ?? 'FakeApp')),
    describe: (element: UiElement) => Promise.resolve(element),
    focus: (element: UiElement) => {
      focused = element.name;
      return Promise.resolve();
    },
    async pressKey(key: KeyName, modifiers: ModifierName[], _options?: CallOptions) {
      pressStarted?.();
      if (gate) await gate;
      presses.push({ key, modifiers, element: focused });
    },
    click: (element: UiElement) => {
      clicks.push(element.name);
      return Promise.resolve();
    },
    typeText: (element: UiElement, text: string) => {
      typed.push({ element: element.name, text });
      return Promise.resolve();
    },
    close: () => Promise.resolve(),
  };

  return {
    desktop,
    presses,
    clicks,
    typed,
    /** The following presses wait for release(); resolves when one has started. */
    holdPresses(): Promise<void> {
      gate = new Promise((resolve) => (open = resolve));
      return new Promise((resolve) => (pressStarted = resolve));
    },
    release(): void {
      open?.();
      gate = undefined;
      pressStarted = undefined;
    },
  };
}
