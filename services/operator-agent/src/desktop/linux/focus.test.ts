import type { ElementRef, UiElement } from '../desktop';
import { focusElement, type FocusSteps } from './focus';
import { clickOnlyFocuses } from './interactability';

function buildElement(overrides: Partial<UiElement> = {}): UiElement {
  return {
    role: 'entry',
    name: 'Last name',
    bounds: { x: 10, y: 20, width: 200, height: 30 },
    app: 'Chromium',
    window: 'w',
    ref: ':1.5/org/a11y/atspi/accessible/1' as ElementRef,
    interactability: 'definite',
    ...overrides,
  };
}

const gone = new Error('UnknownObject');

/** GrabFocus answers `grab` (or throws it); clicks are recorded. */
function steps(grab: boolean | Error) {
  const clicks: string[] = [];
  const waits: number[] = [];
  const fake: FocusSteps = {
    grabFocus: (waitMs) => {
      waits.push(waitMs);
      return grab instanceof Error ? Promise.reject(grab) : Promise.resolve(grab);
    },
    extents: async () => ({ x: 100, y: 200, width: 50, height: 20 }),
    click: async (x, y) => {
      clicks.push(`${x},${y}`);
    },
    isGone: (error) => error === gone,
  };
  return { fake, clicks, waits };
}

describe('focusing an element on Linux', () => {
  it('when GrabFocus takes, then nothing is clicked', async () => {
    const { fake, clicks } = steps(true);
    await focusElement(buildElement(), fake, { focusTimeoutMs: 1000 });
    expect(clicks).toEqual([]);
  });

  it.each(['push button', 'check box', 'link', 'combo box', 'menu item', 'toggle button'])(
    'when a %s does not take focus, then it is not clicked (a click would activate it) and 409',
    async (role) => {
      for (const grab of [false, new Error('GrabFocus not implemented')]) {
        const { fake, clicks } = steps(grab);
        await expect(
          focusElement(buildElement({ role, name: 'Submit' }), fake, { focusTimeoutMs: 1000 }),
        ).rejects.toMatchObject({
          code: 'conflict',
          message: expect.stringContaining("cannot focus the element 'Submit'"),
        });
        expect(clicks).toEqual([]);
      }
    },
  );

  it.each(['entry', 'text', 'password text', 'terminal', 'document text'])(
    'when a %s does not take focus, then it is clicked at its current centre',
    async (role) => {
      const { fake, clicks } = steps(false);
      await focusElement(buildElement({ role }), fake, { focusTimeoutMs: 1000 });
      expect(clicks).toEqual(['125,210']);
    },
  );

  it('when the element is gone, then ElementGone (409) and nothing is clicked', async () => {
    const { fake, clicks } = steps(gone);
    await expect(
      focusElement(buildElement(), fake, { focusTimeoutMs: 1000 }),
    ).rejects.toMatchObject({ code: 'conflict', message: expect.stringMatching(/is gone/) });
    expect(clicks).toEqual([]);
  });

  it('when the deadline is near, then the wait is bounded by it; when it passed, nothing is clicked', async () => {
    const near = steps(false);
    await focusElement(buildElement(), near.fake, {
      focusTimeoutMs: 1000,
      deadline: performance.now() + 300,
    });
    expect(near.waits[0]).toBeLessThanOrEqual(300);

    const passed = steps(false);
    await expect(
      focusElement(buildElement(), passed.fake, {
        focusTimeoutMs: 1000,
        deadline: performance.now() - 1,
      }),
    ).rejects.toMatchObject({ code: 'operation_failed' });
    expect(passed.waits).toEqual([0]);
    expect(passed.clicks).toEqual([]);
  });

  it('when roles are classified, then only text-like roles may be clicked to focus', () => {
    expect(clickOnlyFocuses('Entry')).toBe(true);
    expect(clickOnlyFocuses('push button')).toBe(false);
  });
});
