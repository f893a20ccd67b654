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
}

/**
 * A Desktop with fixed elements that records every key press, for broker-level tests that are
 * about who may press and when, not about X. `holdPresses()` makes the next presses wait until
 * `release()`, so a test can act while a press is in flight.
 */
export function fakeDesktop(app = 'FakeApp', count = 5) {
  const elements: UiElement[] = Array.from({ length: count }, (_, i) => ({
    role: 'entry',
    name: `${app} field ${i}`,
    bounds: { x: 10, y: 10 + i * 30, width: 100, height: 20 },
    app,
    window: `${app} window`,
    ref: `:1.1/${app}/${i}` as ElementRef,
    interactability: 'definite',
  }));
  const presses: RecordedPress[] = [];
  let gate: Promise<void> | undefined;
  let open: (() => void) | undefined;
  let pressStarted: (() => void) | undefined;

  const desktop: Desktop = {
    listElements: () => Promise.resolve(elements),
    describe: (element: UiElement) => Promise.resolve(element),
    focus: () => Promise.resolve(),
    async pressKey(key: KeyName, modifiers: ModifierName[], _options?: CallOptions) {
      pressStarted?.();
      if (gate) await gate;
      presses.push({ key, modifiers });
    },
    close: () => Promise.resolve(),
  };

  return {
    desktop,
    presses,
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
