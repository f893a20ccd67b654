/**
 * The operator path in both modes: list a real desktop's elements (Xvfb + AT-SPI + Chromium
 * showing a page of real-app size, about 500 labelled elements) and press a key with modifiers
 * on one chosen by index, also deep in the list, through the distributed services (RabbitMQ,
 * the agent as its own process) and through `npm start`'s embedded process (the agent in the
 * same process as the gateway, over the in-process bus).
 */
import type { ListElementsResponse } from '@screenfleet/contracts';
import { waitFor } from '@screenfleet/runtime';
import {
  freeDisplayNumber,
  startDesktopHarness,
  type DesktopHarness,
} from '../services/operator-agent/test/support/desktop-harness';
import { LARGE_PAGE, type PageElement } from '../services/operator-agent/test/support/test-page';
import { get, post, tokens } from './support/gateway';
import { modes, startSystem, type RunningSystem } from './support/system';

const LIST = '/experimental/operator/list-interactable-elements';
const PRESS = '/experimental/operator/press-key-by-index';
const CLICK = '/experimental/operator/click-by-index';
const TYPE = '/experimental/operator/type-by-index';

describe.each(modes)('operator commands in %s mode', (mode) => {
  let desk: DesktopHarness | undefined;
  let system: RunningSystem | undefined;
  const device = `${mode}-desk`;

  beforeAll(async () => {
    desk = await startDesktopHarness(
      freeDisplayNumber(mode === 'embedded' ? 130 : 140),
      LARGE_PAGE,
    );
    system = await startSystem(mode, {
      agent: {
        device,
        env: {
          DISPLAY: desk.env.DISPLAY,
          DBUS_SESSION_BUS_ADDRESS: desk.env.DBUS_SESSION_BUS_ADDRESS,
        },
      },
    });
  }, 120_000);

  afterAll(async () => {
    await system?.stop();
    await desk?.stop();
  }, 60_000);

  /** Lists the page, retried until Chromium exposed the whole page (its last element too). */
  async function listPage(): Promise<ListElementsResponse> {
    const lastElement = desk!.pageElements[desk!.pageElements.length - 1] as PageElement;
    let last: Awaited<ReturnType<typeof post>> | undefined;
    return waitFor(
      async () => {
        last = await post(system!.url + LIST, { app_name: 'Chromium', device_name: device });
        const body = last.body as unknown as ListElementsResponse;
        return (
          last.status === 200 && body.elements.some((e) => e.text === lastElement.label) && body
        );
      },
      {
        timeoutMs: 30_000,
        intervalMs: 200,
        what: () => `the page listed (last: ${last?.status} ${JSON.stringify(last?.body)})`,
      },
    );
  }

  it('when a key with modifiers is pressed on an element chosen by index, then it arrives there with them', async () => {
    const listing = await listPage();
    const last = listing.elements.find((e) => e.text === 'Last name' && e.role === 'entry');
    expect(last).toBeDefined();

    const response = await post(system!.url + PRESS, {
      element_index: last!.index,
      key: 'k',
      modifiers: ['ctrl', 'shift'],
      device_name: device,
    });

    expect(response).toMatchObject({ status: 200, body: { success: true } });
    expect(await desk!.waitForKeydown((r) => r.code === 'KeyK')).toMatchObject({
      activeId: 'last',
      ctrlKey: true,
      shiftKey: true,
      altKey: false,
    });
  });

  it('when keys are pressed on elements deep in the ~500-element listing, then each arrives on its element', async () => {
    const listing = await listPage();
    const page = desk!.pageElements;
    // The whole page in its order (the browser's document element aside).
    expect(listing.elements.filter((e) => e.role !== 'document web').map((e) => e.text)).toEqual(
      page.map((e) => e.label),
    );
    for (const { role, key } of [
      { role: 'entry', key: 'u' },
      { role: 'list item', key: 'v' },
    ]) {
      const target = listing.elements.find((e) => e.index >= 440 && e.role === role);
      const element = page.find((e) => e.label === target?.text) as PageElement;
      const response = await post(system!.url + PRESS, {
        element_index: target!.index,
        key,
        modifiers: ['shift'],
        device_name: device,
        cache_id: listing.cache_info.cache_id,
      });
      expect(response).toMatchObject({ status: 200, body: { success: true } });
      const code = `Key${key.toUpperCase()}`;
      expect(await desk!.waitForKeydown((r) => r.code === code)).toMatchObject({
        activeId: element.id,
        shiftKey: true,
      });
    }
  });

  it("when text is typed and a button clicked by index in screenpipe SDK's shapes, then the page has the text and the click", async () => {
    const listing = await listPage();
    const page = desk!.pageElements;
    const input = listing.elements.find((e) => e.index >= 440 && e.role === 'entry');
    const button = listing.elements.find((e) => e.index >= 440 && e.role === 'push button');
    const inputId = page.find((e) => e.label === input?.text)!.id;
    const buttonId = page.find((e) => e.label === button?.text)!.id;

    const text = 'Grüße, 東京 😀 #42';
    // Typed at the caret: after what an earlier test put there.
    const expected = (desk!.valueOf(inputId) ?? '') + text;
    const typed = await post(system!.url + TYPE, {
      element_index: input!.index,
      text,
      device_name: device,
    });
    expect(typed).toMatchObject({ status: 200, body: { success: true } });
    await waitFor(() => desk!.valueOf(inputId) === expected, {
      timeoutMs: 5000,
      what: () => `#${inputId} to show the text (it shows ${desk!.valueOf(inputId)})`,
    });

    const clicked = await post(system!.url + CLICK, {
      element_index: button!.index,
      device_name: device,
      cache_id: listing.cache_info.cache_id,
    });
    expect(clicked).toMatchObject({ status: 200, body: { success: true } });
    await waitFor(() => desk!.clicks().includes(buttonId), { timeoutMs: 5000, what: 'the click' });
  });

  it('when commands were pressed, typed and clicked, then each is an audit row with who, where, what and how it ended, never the typed text', async () => {
    type Row = { actor: string; device: string; outcome: string; details: Record<string, unknown> };
    const rows = async (action: string): Promise<Row[]> => {
      const page = await get(
        `${system!.url}/audit?action=${action}&device=${encodeURIComponent(device)}`,
        tokens.admin.token,
      );
      expect(page.status).toBe(200);
      return (page.body as unknown as { rows: Row[] }).rows;
    };
    // The ingest worker writes them after the answers: read until the last one is there.
    await waitFor(async () => (await rows('operator.click')).length > 0, {
      timeoutMs: 10_000,
      what: 'the click in the audit trail',
    });
    const presses = await rows('operator.press');
    expect(presses).toContainEqual(
      expect.objectContaining({
        actor: tokens.all.id,
        outcome: 'ok',
        details: expect.objectContaining({ key: 'k', modifiers: ['ctrl', 'shift'] }),
      }),
    );
    const [typed] = await rows('operator.type');
    expect(typed).toMatchObject({ outcome: 'ok', details: { text_length: expect.any(Number) } });
    expect(JSON.stringify(typed)).not.toContain('"text"');
  });
});
