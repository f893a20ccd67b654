import type { ElementRef, UiElement } from '../../desktop';
import { focusElement, type FocusOutcome, type FocusSteps } from './focus';
import { clickOnlyFocuses } from '../listing/interactability';

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

interface Scenario {
  /** What the element reports before anything is asked (possibly stale). */
  focusedNow?: boolean;
  web?: boolean;
  /** GrabFocus's answer (or its error). */
  grab?: boolean | Error;
  /** The events each wait sees, in order: what the application sends after each request. */
  outcomes?: FocusOutcome[];
  /** Whether the element is what the application has at its centre. */
  topmost?: boolean;
}

/** Fake steps recording every request in order. */
function steps(scenario: Scenario) {
  const calls: string[] = [];
  const outcomes = [...(scenario.outcomes ?? [])];
  const fake: FocusSteps = {
    record: () => ({
      next: (which, timeoutMs) => {
        calls.push(`wait ${which} ${timeoutMs}`);
        return Promise.resolve(outcomes.shift() ?? 'timeout');
      },
      stop: () => calls.push('stop'),
    }),
    reportsFocused: () => Promise.resolve(scenario.focusedNow ?? false),
    inDocument: () => Promise.resolve(scenario.web ?? true),
    grabFocus: (which) => {
      calls.push(`grab ${which}`);
      const grab = scenario.grab ?? true;
      return grab instanceof Error ? Promise.reject(grab) : Promise.resolve(grab);
    },
    extents: async () => ({ x: 100, y: 200, width: 50, height: 20 }),
    isTopmostAt: (x, y) => {
      calls.push(`hit ${x},${y}`);
      return Promise.resolve(scenario.topmost ?? true);
    },
    click: async (x, y) => {
      calls.push(`click ${x},${y}`);
    },
    isGone: (error) => error === gone,
  };
  return { fake, calls };
}

const options = { focusTimeoutMs: 1000 };

describe('focusing an element on Linux', () => {
  it('when the element is not focused, then focus waits for its own focus event after GrabFocus', async () => {
    const { fake, calls } = steps({ outcomes: ['focused'] });
    await focusElement(buildElement(), fake, options);
    expect(calls).toEqual(['grab element', 'wait element 1000', 'stop']);
  });

  it('when web content reports the element focused (maybe stale), then the focus goes to the document first, then back, each awaited', async () => {
    const { fake, calls } = steps({ focusedNow: true, outcomes: ['focused', 'focused'] });
    await focusElement(buildElement(), fake, options);
    expect(calls).toEqual([
      'grab document',
      'wait document 1000',
      'grab element',
      'wait element 1000',
      'stop',
    ]);
  });

  it('when an element outside web content reports focused, then that live state is believed', async () => {
    const { fake, calls } = steps({ focusedNow: true, web: false });
    await focusElement(buildElement(), fake, options);
    expect(calls).toEqual(['stop']);
  });

  it('when the element is removed while focus waits, then ElementGone (409) and nothing is clicked', async () => {
    for (const scenario of [
      { outcomes: ['gone'] },
      { focusedNow: true, outcomes: ['gone'] },
      { grab: gone },
    ] as Scenario[]) {
      const { fake, calls } = steps(scenario);
      await expect(focusElement(buildElement(), fake, options)).rejects.toMatchObject({
        code: 'conflict',
        message: expect.stringMatching(/is gone/),
      });
      expect(calls.filter((c) => c.startsWith('click'))).toEqual([]);
    }
  });

  it.each(['push button', 'check box', 'link', 'combo box', 'menu item', 'toggle button'])(
    'when a %s does not take focus, then it is not clicked (a click would activate it) and 409',
    async (role) => {
      for (const grab of [false, true, new Error('GrabFocus not implemented')]) {
        const { fake, calls } = steps({ grab });
        await expect(
          focusElement(buildElement({ role, name: 'Submit' }), fake, options),
        ).rejects.toMatchObject({
          code: 'conflict',
          message: expect.stringContaining("cannot focus the element 'Submit'"),
        });
        expect(calls.filter((c) => c.startsWith('click'))).toEqual([]);
      }
    },
  );

  it.each(['entry', 'text', 'password text', 'terminal', 'document text'])(
    'when a %s does not take focus, then it is clicked at its current centre and its focus event awaited',
    async (role) => {
      const { fake, calls } = steps({ grab: false, outcomes: ['focused'] });
      await focusElement(buildElement({ role }), fake, options);
      expect(calls).toEqual([
        'grab element',
        'hit 125,210',
        'click 125,210',
        'wait element 1000',
        'stop',
      ]);
    },
  );

  it('when something else is at a text field centre, or it does not report focus after the click, then 409', async () => {
    const covered = steps({ grab: false, topmost: false });
    await expect(focusElement(buildElement(), covered.fake, options)).rejects.toMatchObject({
      code: 'conflict',
      message: expect.stringContaining('something else is at its centre'),
    });
    expect(covered.calls.filter((c) => c.startsWith('click'))).toEqual([]);

    const deaf = steps({ grab: false, outcomes: ['timeout'] });
    await expect(focusElement(buildElement(), deaf.fake, options)).rejects.toMatchObject({
      code: 'conflict',
      message: expect.stringContaining('did not report focus after a click'),
    });
  });

  it('when the deadline is near, then each wait is bounded by it; when it passed, nothing is clicked', async () => {
    const near = steps({ outcomes: ['focused'] });
    await focusElement(buildElement(), near.fake, {
      ...options,
      deadline: performance.now() + 300,
    });
    const waited = Number(near.calls[1]?.split(' ')[2]);
    expect(waited).toBeLessThanOrEqual(300);

    const passed = steps({ grab: false });
    await expect(
      focusElement(buildElement(), passed.fake, { ...options, deadline: performance.now() - 1 }),
    ).rejects.toMatchObject({ code: 'operation_failed' });
    expect(passed.calls.filter((c) => c.startsWith('click'))).toEqual([]);
  });

  it('when roles are classified, then only text-like roles may be clicked to focus', () => {
    expect(clickOnlyFocuses('Entry')).toBe(true);
    expect(clickOnlyFocuses('push button')).toBe(false);
  });
});
