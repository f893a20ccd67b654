/**
 * Clicking and typing through the Linux adapter on a real desktop (Xvfb + AT-SPI + Chromium);
 * what the page received is read from its own records (clicks, input values, keydowns).
 */
import { ConflictError, ValidationError } from '@screenfleet/contracts';
import { waitFor } from '@screenfleet/runtime';
import { ElementGoneError, type UiElement } from '../src/desktop';
import { listedWith, useLinuxDesktop } from './support/linux-desktop-suite';
import { PAGE_BUTTON, PAGE_FIELDS } from './support/test-page';
import { openX11Connection } from '../src/desktop/linux/x11/x11.connection';

describe('clicking and typing on a real desktop', () => {
  const { harness: h, desktop: d } = useLinuxDesktop(120);

  /** The form's elements by DOM id, listed until all of it is exposed. */
  const form = async (): Promise<Map<string, UiElement>> => {
    const list = await listedWith(d(), [...PAGE_FIELDS.map((f) => f.id), PAGE_BUTTON.id]);
    return new Map(list.map((e) => [e.domId ?? '', e]));
  };
  const valueOf = (id: string, value: string) =>
    waitFor(() => h().valueOf(id) === value, {
      timeoutMs: 5000,
      what: () =>
        `#${id} to show ${JSON.stringify(value)} (it shows ${JSON.stringify(h().valueOf(id))})`,
    });

  test('when text with accents, symbols, CJK and emoji is typed, then the input holds exactly it and no modifier stays down', async () => {
    const elements = await form();
    const text = 'Zoë Saldaña, 東京 😀 ~!@#$%^&*()_+{}|:"<>? ß€';
    await d().typeText(elements.get('first') as UiElement, text);
    await valueOf('first', text);
    // Typed on: the caret was at the end.
    await d().typeText(elements.get('first') as UiElement, ' & more');
    await valueOf('first', `${text} & more`);
    // Shift (for the capitals and symbols) is up again.
    await d().focus(elements.get('last') as UiElement);
    await d().pressKey('b', []);
    const b = await h().waitForKeydown((r) => r.code === 'KeyB', 5000);
    expect(b).toMatchObject({ key: 'b', shiftKey: false, ctrlKey: false, activeId: 'last' });
  });

  test('when a text has more different characters than the keyboard has free keys, then it is typed in runs, arrives whole, and every lent key is given back', async () => {
    const elements = await form();
    const keymap = await openX11Connection(h().env, 3000);
    try {
      const before = JSON.stringify(await keymap.keyboardMapping());
      // 60 different characters no key of the map has (Xvfb's map leaves 19 keys free).
      const text = Array.from({ length: 60 }, (_, i) => String.fromCodePoint(0x4e00 + i * 7)).join(
        '',
      );
      await d().typeText(elements.get('email') as UiElement, text);
      await valueOf('email', text);
      // The last run's keys go back in requests sent before the answer, which the server may
      // do a moment after this connection's read.
      await waitFor(async () => JSON.stringify(await keymap.keyboardMapping()) === before, {
        timeoutMs: 2000,
        what: 'the keymap as it was before the typing',
      });
    } finally {
      keymap.close();
    }
  });

  test('when the page keeps less than was typed, then typing fails saying what the element shows', async () => {
    await h().limitLength('last', 3);
    const elements = await form();
    await expect(d().typeText(elements.get('last') as UiElement, 'abcdef')).rejects.toMatchObject({
      code: 'operation_failed',
      message: expect.stringContaining('but it shows "bab"'),
    });
  });

  test('when the element takes no text, or a line break would leave a one-line field, then 409 and nothing is typed', async () => {
    const elements = await form();
    const before = h().keydowns().length;
    await expect(d().typeText(elements.get('submit') as UiElement, 'x')).rejects.toBeInstanceOf(
      ConflictError,
    );
    await expect(
      d().typeText(elements.get('first') as UiElement, 'one\ntwo'),
    ).rejects.toMatchObject({ code: 'conflict', message: expect.stringContaining('single-line') });
    await expect(
      d().typeText(elements.get('first') as UiElement, 'bell \u0007'),
    ).rejects.toBeInstanceOf(ValidationError);
    expect(h().keydowns().length).toBe(before);
  });

  test('when a button is clicked by the adapter, then the page sees the click on it', async () => {
    const elements = await form();
    await d().click(elements.get('submit') as UiElement);
    await waitFor(() => h().clicks().includes('submit'), { timeoutMs: 5000, what: 'the click' });
  });

  test('when something covers the element, then the click is refused (409) and the page sees none', async () => {
    const elements = await form();
    await h().coverElement('submit');
    // The accessibility tree follows the page a moment later: a click decided before it shows
    // the banner would see the element uncovered (and the page would get the click).
    await waitFor(
      async () =>
        (await d().listElements({ appName: 'chromium' }, { domIds: true })).some(
          (e) => e.domId === 'cover-submit',
        ),
      { timeoutMs: 5000, intervalMs: 20, what: 'the banner seen over AT-SPI' },
    );
    const clicked = h().clicks().length;
    try {
      await expect(d().click(elements.get('submit') as UiElement)).rejects.toMatchObject({
        code: 'conflict',
        message: expect.stringContaining('something else is at its centre'),
      });
    } finally {
      await h().uncoverElement('submit');
    }
    // Clicked now that it is free: the page saw this click and no other since.
    await d().click(elements.get('submit') as UiElement);
    await waitFor(() => h().clicks().length > clicked, { timeoutMs: 5000, what: 'the click' });
    expect(h().clicks().slice(clicked)).toEqual(['submit']);
  });

  test('when the element is gone, then clicking and typing say so and do nothing', async () => {
    const elements = await form();
    await h().removeElement('email');
    const clicked = h().clicks().length;
    const typed = h().keydowns().length;
    await waitFor(async () => (await d().describe(elements.get('email') as UiElement)) === null, {
      timeoutMs: 5000,
      what: 'the removal seen over AT-SPI',
    });
    await expect(d().click(elements.get('email') as UiElement)).rejects.toBeInstanceOf(
      ElementGoneError,
    );
    await expect(d().typeText(elements.get('email') as UiElement, 'x')).rejects.toBeInstanceOf(
      ElementGoneError,
    );
    expect(h().clicks().length).toBe(clicked);
    expect(h().keydowns().length).toBe(typed);
    await h().restoreElement('email');
  });
});
