/**
 * The Linux Desktop adapter against real desktops: Xvfb + AT-SPI + Chromium showing a page
 * that reports every keydown it receives. Fails (never skips) when the tooling is missing.
 */
import { ValidationError } from '@screenfleet/contracts';
import { waitFor } from '@screenfleet/runtime';
import {
  checkDesktop,
  createLinuxDesktop,
  ElementGoneError,
  nutInput,
  pressWithModifiers,
  type Desktop,
  type KeyboardDriver,
  type KeyName,
  type ModifierName,
  type UiElement,
} from '../src/desktop';
import { AtspiClient, decodeRef, isGoneError } from '../src/desktop/linux/atspi/atspi.client';
import {
  freeDisplayNumber,
  startDesktopHarness,
  type DesktopHarness,
} from './support/desktop-harness';
import {
  LARGE_PAGE,
  PAGE_BUTTON,
  PAGE_FIELDS,
  PAGE_TITLE,
  type KeydownReport,
  type PageElement,
} from './support/test-page';

const now = (): number => performance.timeOrigin + performance.now();

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? NaN;
}

function noModifiers(report: KeydownReport): boolean {
  return !report.ctrlKey && !report.shiftKey && !report.altKey && !report.metaKey;
}

/** The first value `read` gives that is `done`, polled with the runtime's waitFor. */
function eventually<T>(
  what: string,
  read: () => Promise<T>,
  done: (value: T) => boolean,
  timeoutMs = 3000,
): Promise<T> {
  return waitFor(
    async () => {
      const value = await read();
      return done(value) ? { value } : undefined;
    },
    { timeoutMs, intervalMs: 20, what },
  ).then(({ value }) => value);
}

/** Where a real app's element may sit in a long listing: the scale tests press there. */
const DEEP_INDEX = 440;

describe('Linux desktop (AT-SPI + nut-js) on a real Xvfb desktop', () => {
  let main: DesktopHarness | undefined;
  let other: DesktopHarness | undefined;
  let desktop: Desktop | undefined;
  let otherDesktop: Desktop | undefined;
  const timings: Record<string, string> = {};

  const h = (): DesktopHarness => main as DesktopHarness;
  const d = (): Desktop => desktop as Desktop;

  /**
   * The page's elements with their DOM ids, retried until Chromium has exposed the whole page
   * (the main desktop shows LARGE_PAGE, the other the form alone).
   */
  const pageElements = (target: Desktop = d()): Promise<UiElement[]> => {
    const page = target === d() ? h().pageElements : (other as DesktopHarness).pageElements;
    const last = page[page.length - 1] as PageElement;
    return eventually(
      'the page elements over AT-SPI',
      () => target.listElements({ appName: 'chromium' }, { domIds: true }),
      (list) => list.some((e) => e.domId === last.id),
      15_000,
    );
  };

  const byDomId = (list: UiElement[], id: string): UiElement => {
    const found = list.find((e) => e.domId === id);
    if (!found) throw new Error(`#${id} not listed: ${JSON.stringify(list.map((e) => e.name))}`);
    return found;
  };

  const press = async (
    key: KeyName,
    modifiers: ModifierName[],
    expected: (r: KeydownReport) => boolean,
  ): Promise<KeydownReport> => {
    await d().pressKey(key, modifiers);
    return h().waitForKeydown(expected, 5000);
  };

  beforeAll(async () => {
    const first = freeDisplayNumber(90);
    const second = freeDisplayNumber(first + 1);
    const started = Date.now();
    const results = await Promise.allSettled([
      startDesktopHarness(first, LARGE_PAGE),
      startDesktopHarness(second),
    ]);
    [main, other] = results.map((r) => (r.status === 'fulfilled' ? r.value : undefined));
    const failed = results.find((r) => r.status === 'rejected');
    if (failed) throw failed.reason;
    timings['two desktops started (ms)'] = String(Date.now() - started);
    desktop = await createLinuxDesktop({ env: h().env });
    otherDesktop = await createLinuxDesktop({ env: (other as DesktopHarness).env });
  }, 90_000);

  afterAll(async () => {
    await desktop?.close();
    await otherDesktop?.close();
    await Promise.all([main?.stop(), other?.stop()]);
    process.stdout.write(`\nLinux desktop timings: ${JSON.stringify(timings, null, 2)}\n`);
  }, 30_000);

  test('when the display and the accessibility bus answer, then the check passes', async () => {
    await expect(checkDesktop(h().env)).resolves.toEqual({ ok: true });
  });

  test('when DISPLAY is missing or dead, then the check says so instead of crashing', async () => {
    const noDisplay = await checkDesktop({ ...h().env, DISPLAY: undefined });
    expect(noDisplay).toEqual({ ok: false, reason: expect.stringContaining('DISPLAY') as string });
    const dead = freeDisplayNumber(150);
    const deadDisplay = await checkDesktop({ ...h().env, DISPLAY: `:${dead}` });
    expect(deadDisplay).toEqual({ ok: false, reason: `The X display :${dead} does not answer` });
    await expect(createLinuxDesktop({ env: { DISPLAY: `:${dead}` } })).rejects.toMatchObject({
      code: 'desktop_unavailable',
    });
  });

  test('when the session bus has no accessibility bus, then the check says so', async () => {
    const result = await checkDesktop({
      DISPLAY: h().env.DISPLAY,
      DBUS_SESSION_BUS_ADDRESS: 'unix:path=/nonexistent/bus',
    });
    expect(result.ok).toBe(false);
  });

  test('when listing the Chromium app, then the page controls come in document order', async () => {
    const list = await pageElements();
    // Every keyboard-reachable element of the ~500-element page, with its label and role, in
    // document order (the page's own order), and nothing that is not reachable (headings, text).
    const page = h().pageElements;
    expect(page.length).toBeGreaterThanOrEqual(500);
    const listedPage = list.filter((e) => e.role !== 'document web');
    expect(listedPage.map((e) => [e.domId, e.name, e.role])).toEqual(
      page.map((e) => [e.id, e.label, e.role]),
    );
    const durations: number[] = [];
    for (let i = 0; i < 20; i++) {
      const started = now();
      await d().listElements({ appName: 'Chromium' });
      durations.push(now() - started);
    }
    timings['listElements p50/p95 (ms)'] =
      `${percentile(durations, 50).toFixed(1)} / ${percentile(durations, 95).toFixed(1)} (${list.length} elements)`;

    const ids = [...PAGE_FIELDS.map((f) => f.id), PAGE_BUTTON.id];
    const indices = ids.map((id) => list.indexOf(byDomId(list, id)));
    expect([...indices].sort((a, b) => a - b)).toEqual(indices);
    const last = byDomId(list, 'last');
    expect(last).toMatchObject({
      role: 'entry',
      name: 'Last name',
      app: 'Chromium',
      interactability: 'definite',
    });
    expect(last.window).toContain(PAGE_TITLE);
    expect(last.bounds.width).toBeGreaterThan(0);
    expect(byDomId(list, PAGE_BUTTON.id)).toMatchObject({
      role: 'push button',
      name: PAGE_BUTTON.label,
    });
    // The same call twice gives the same order: indices are stable.
    const again = await d().listElements({ appName: 'chromium' });
    expect(again.map((e) => e.ref)).toEqual(list.map((e) => e.ref));
    // Filters: an unknown app lists nothing, a window filter keeps the page.
    await expect(d().listElements({ appName: 'no such app' })).resolves.toEqual([]);
    const byWindow = await d().listElements({ windowName: 'operator TEST' });
    expect(byWindow.map((e) => e.ref)).toEqual(list.map((e) => e.ref));
  });

  test('when keys are pressed on elements deep in a long listing, then each arrives on its element', async () => {
    const list = await pageElements();
    // One of each kind, from index DEEP_INDEX on: an input, a button, a link, a list item.
    const deep = (['entry', 'push button', 'link', 'list item'] as const).map((role) => {
      const index = list.findIndex((e, i) => i >= DEEP_INDEX && e.role === role);
      expect(index).toBeGreaterThanOrEqual(DEEP_INDEX);
      return { index, element: list[index] as UiElement };
    });
    for (const [i, { index, element }] of deep.entries()) {
      // The press path: the element re-read (unchanged), focused, then the key.
      await expect(d().describe(element)).resolves.toMatchObject({
        name: element.name,
        role: element.role,
        bounds: element.bounds,
      });
      await d().focus(element);
      const letter = 'wxyz'[i] as KeyName;
      const report = await press(letter, ['shift'], (r) => r.code === `Key${letter.toUpperCase()}`);
      expect({ index, activeId: report.activeId, key: report.key }).toEqual({
        index,
        activeId: element.domId,
        key: letter.toUpperCase(),
      });
    }
  });

  test('when an element is renamed and nothing moves, then the next listings show the new name at once', async () => {
    const list = await pageElements();
    const index = list.findIndex((e) => e.domId === 's10-field1');
    const before = list[index] as UiElement;
    expect(before.name).toBe('Price 11');
    await d().listElements({ appName: 'chromium' }); // the tree is cached now

    await h().renameElement('s10-field1', 'Costs 11');
    // Well within the tree cache's age limit (5 s): only the rename event can have refreshed it.
    const relisted = await eventually(
      'the new name in the listing',
      () => d().listElements({ appName: 'chromium' }),
      (now) => now[index]?.name === 'Costs 11',
      2000,
    );
    expect(relisted[index]).toMatchObject({
      ref: before.ref,
      role: 'entry',
      bounds: before.bounds,
    });
  });

  test('when the second input is focused by index, then keys and modifiers arrive there', async () => {
    const list = await pageElements();
    const inputs = list.filter((e) => e.role === 'entry');
    const second = inputs[1] as UiElement;
    const index = list.indexOf(second);
    const target = list[index] as UiElement;
    expect(target.domId).toBe('last');
    await d().focus(target);
    h().clearKeydowns();

    const at = (id: string) => (r: KeydownReport) => r.activeId === id;
    expect(await press('a', [], (r) => r.key === 'a')).toMatchObject({
      activeId: 'last',
      code: 'KeyA',
      ctrlKey: false,
      shiftKey: false,
      altKey: false,
      metaKey: false,
    });
    expect(await press('a', ['shift'], (r) => r.code === 'KeyA' && at('last')(r))).toMatchObject({
      key: 'A',
      shiftKey: true,
      ctrlKey: false,
    });
    // The next plain key shows that shift was released.
    const afterShift = await press('b', [], (r) => r.code === 'KeyB');
    expect(afterShift.key).toBe('b');
    expect(noModifiers(afterShift)).toBe(true);

    expect(await press('a', ['ctrl'], (r) => r.code === 'KeyA')).toMatchObject({
      ctrlKey: true,
      shiftKey: false,
      activeId: 'last',
    });
    expect(await press('x', ['alt'], (r) => r.code === 'KeyX')).toMatchObject({
      altKey: true,
      ctrlKey: false,
      activeId: 'last',
    });
    expect(await press('z', ['ctrl', 'alt', 'shift'], (r) => r.code === 'KeyZ')).toMatchObject({
      ctrlKey: true,
      altKey: true,
      shiftKey: true,
      metaKey: false,
    });
    expect(await press('m', ['meta'], (r) => r.code === 'KeyM')).toMatchObject({
      metaKey: true,
      activeId: 'last',
    });
    const plain = await press('c', [], (r) => r.code === 'KeyC');
    expect(noModifiers(plain)).toBe(true);

    expect(await press('7', [], (r) => r.code === 'Digit7')).toMatchObject({ key: '7' });
    expect(await press('7', ['shift'], (r) => r.code === 'Digit7')).toMatchObject({
      key: '&',
      shiftKey: true,
    });
    expect(await press('up', [], (r) => r.key === 'ArrowUp')).toMatchObject({ activeId: 'last' });
    expect(await press('left', [], (r) => r.key === 'ArrowLeft')).toMatchObject({
      activeId: 'last',
    });
    expect(await press('enter', [], (r) => r.key === 'Enter')).toMatchObject({
      code: 'Enter', // not NumpadEnter
      activeId: 'last',
    });
    expect(await press('escape', [], (r) => r.key === 'Escape')).toMatchObject({
      activeId: 'last',
    });
    expect(await press('f2', [], (r) => r.key === 'F2')).toMatchObject({ activeId: 'last' });
    // Tab arrives at the focused input, then moves focus on to the next one.
    expect(await press('tab', [], (r) => r.key === 'Tab')).toMatchObject({ activeId: 'last' });
    expect(await press('q', [], (r) => r.code === 'KeyQ')).toMatchObject({ activeId: 'email' });
  });

  test('when a press fails with modifiers held, then every modifier is released', async () => {
    const list = await pageElements();
    await d().focus(byDomId(list, 'first'));
    h().clearKeydowns();

    // A keyboard that really holds the modifiers on the X server, then fails on the key.
    const input = nutInput({ ...process.env, ...h().env });
    try {
      await expect(
        input.withKeyboard((keyboard) => {
          const failing: KeyboardDriver = {
            pressKey: (key) =>
              key === 'D' ? Promise.reject(new Error('injected failure')) : keyboard.pressKey(key),
            releaseKey: (key) => keyboard.releaseKey(key),
          };
          return pressWithModifiers(failing, 'D', ['LeftShift', 'LeftControl']);
        }),
      ).rejects.toThrow('injected failure');
    } finally {
      input.close();
    }
    // The modifiers did go down on the page ...
    await h().waitForKeydown((r) => r.key === 'Shift', 5000);
    await h().waitForKeydown((r) => r.key === 'Control', 5000);
    // ... and are up again: the next plain key carries no modifier flag.
    const next = await press('e', [], (r) => r.code === 'KeyE');
    expect(next).toMatchObject({ key: 'e', activeId: 'first' });
    expect(noModifiers(next)).toBe(true);

    // Bad names are refused before anything is pressed.
    await expect(d().pressKey('nope' as KeyName, ['shift'])).rejects.toBeInstanceOf(
      ValidationError,
    );
    await expect(d().pressKey('a', ['hyper' as ModifierName])).rejects.toBeInstanceOf(
      ValidationError,
    );
    const after = await press('f', [], (r) => r.code === 'KeyF');
    expect(noModifiers(after)).toBe(true);
  });

  test('when focus, press and the page report are timed, then latency is recorded', async () => {
    const list = await pageElements();
    const targets = ['first', 'last'].map((id) => byDomId(list, id));
    const latencies: number[] = [];
    for (let i = 0; i < 50; i++) {
      const target = targets[i % 2] as UiElement;
      const letter = 'ghijklmnop'[i % 10] as KeyName;
      h().clearKeydowns();
      const started = now();
      await d().focus(target);
      await d().pressKey(letter, []);
      const report = await h().waitForKeydown(
        (r) => r.key === letter && r.activeId === target.domId,
        5000,
      );
      latencies.push(report.at - started);
    }
    timings['focus+press -> page keydown p50/p95 (ms, 50 presses)'] =
      `${percentile(latencies, 50).toFixed(1)} / ${percentile(latencies, 95).toFixed(1)}`;
    expect(latencies).toHaveLength(50);
  });

  test('when the page removes an element, then describe() says it is gone', async () => {
    const list = await pageElements();
    const email = byDomId(list, 'email');
    await expect(d().describe(email)).resolves.toMatchObject({
      role: 'entry',
      name: 'Email',
      bounds: email.bounds,
    });

    const started = now();
    await h().removeElement('email');
    await eventually(
      'describe() to return null',
      () => d().describe(email),
      (value) => value === null,
    );
    timings['removal -> describe() null (ms)'] = (now() - started).toFixed(1);
    // Whether Chromium still answers for it (as defunct) or has forgotten it: gone, not refused.
    await expect(d().focus(email)).rejects.toBeInstanceOf(ElementGoneError);
    await expect(d().click(email)).rejects.toBeInstanceOf(ElementGoneError);
    await expect(d().typeText(email, 'x')).rejects.toBeInstanceOf(ElementGoneError);
    const relisted = await d().listElements({ appName: 'chromium' }, { domIds: true });
    expect(relisted.map((e) => e.domId)).not.toContain('email');
    expect(relisted.map((e) => e.domId)).toContain('submit');

    // Bounds are read in one batch: an object that is gone gets its own outcome, the rest read.
    // The object is one Chromium never had: the removed element may be forgotten at once or
    // kept for as long as Chromium holds it (seen for more than 10 s), defunct with zero
    // extents, which is why the checks above read its states.
    const atspi = await AtspiClient.connect(h().env.DBUS_SESSION_BUS_ADDRESS, 3000);
    try {
      const submitElement = byDomId(relisted, 'submit');
      const submit = decodeRef(submitElement.ref);
      const never = { bus: submit.bus, path: '/org/a11y/atspi/accessible/2147483000' };
      const [gone, live] = await atspi.extentsOf([never, submit]);
      expect(isGoneError(gone)).toBe(true);
      expect(live).toEqual(submitElement.bounds);
      // Role names likewise: the gone object's role stays unknown, the other is learned.
      await atspi.learnRoleNames([
        { ref: never, role: 1000 },
        { ref: submit, role: 1001 },
      ]);
      expect(atspi.knownRoleName(1000)).toBeUndefined();
      expect(atspi.knownRoleName(1001)).toBe(submitElement.role);
    } finally {
      atspi.close();
    }
  });

  test('when two desktops run at once, then each gets only its own keys', async () => {
    const second = other as DesktopHarness;
    const secondDesktop = otherDesktop as Desktop;
    const [mainList, otherList] = await Promise.all([pageElements(), pageElements(secondDesktop)]);
    await secondDesktop.focus(byDomId(otherList, 'last'));
    await d().focus(byDomId(mainList, 'first'));
    h().clearKeydowns();
    second.clearKeydowns();

    await secondDesktop.pressKey('s', ['shift']);
    await d().pressKey('t', []);
    await expect(second.waitForKeydown((r) => r.code === 'KeyS', 5000)).resolves.toMatchObject({
      key: 'S',
      activeId: 'last',
    });
    await expect(h().waitForKeydown((r) => r.code === 'KeyT', 5000)).resolves.toMatchObject({
      key: 't',
      activeId: 'first',
    });
    expect(
      h()
        .keydowns()
        .some((r) => r.code === 'KeyS'),
    ).toBe(false);
    expect(second.keydowns().some((r) => r.code === 'KeyT')).toBe(false);
  });
});
