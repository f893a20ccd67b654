/**
 * The console's page, sign-in and policy in a real headless Chromium, against the gateway built
 * as main.ts builds it (on this run's RabbitMQ; no worker is needed for what is checked here).
 * The views' flows against a whole system, in both modes, are in test/console.int.test.ts.
 */
import type { Browser, Page } from 'playwright-core';
import type { DeviceSummary } from '@screenfleet/contracts';
import { waitFor } from '@screenfleet/runtime';
import { isolatedBroker } from '../../../test/services';
import {
  firstLoadBytes,
  launchChromium,
  openConsole,
  screenshot,
  seriousViolations,
  signIn,
  tabTo,
  type ConsolePage,
} from '../../../test/support/console-browser';
import { startGateway, tokens, type RunningGateway } from '../../../test/support/gateway';
import { buildDeviceDetail, buildFleet } from '../console/src/fleet.fixture';

/** The budget for the first load's scripts and stylesheets, compressed. */
const firstLoadBudgetBytes = 200_000;

/**
 * GET /devices answered by the page's route with `fleet()` (as the gateway pages it), and the
 * page reloaded to ask it: the Fleet view against as many devices as a test needs, no store.
 */
async function serveFleet(page: Page, fleet: () => readonly DeviceSummary[]): Promise<void> {
  await page.route(/\/devices\?/, (route) => {
    const query = new URL(route.request().url()).searchParams;
    const offset = Number(query.get('offset') ?? 0);
    const limit = Number(query.get('limit') ?? 50);
    const devices = fleet();
    return route.fulfill({
      json: {
        data: devices.slice(offset, offset + limit),
        pagination: { limit, offset, total: devices.length },
      },
    });
  });
  await page.reload();
}

/** The name of the link that has the focus, if a link has it. */
const focusedLink = (page: Page) =>
  page.evaluate(() =>
    document.activeElement instanceof HTMLAnchorElement ? document.activeElement.innerText : null,
  );

describe('the console page in a real headless Chromium', () => {
  let broker: { url: string; remove(): Promise<void> };
  let gateway: RunningGateway;
  let browser: Browser;
  let opened: ConsolePage | undefined;

  beforeAll(async () => {
    broker = await isolatedBroker();
    gateway = await startGateway(broker.url);
    browser = await launchChromium();
  });
  afterEach(async () => {
    await opened?.close();
    opened = undefined;
  });
  afterAll(async () => {
    await browser?.close();
    await gateway?.close();
    await broker?.remove();
  });

  it('when the console is opened without a token, then it asks for one, accessibly, and the first load stays within 200 KB compressed', async () => {
    opened = await openConsole(browser, gateway.url);
    const { page } = opened;
    await page.getByLabel('Access token').waitFor();
    await page.waitForLoadState('networkidle');

    const load = await firstLoadBytes(page);
    expect(load.files).toBeGreaterThan(10);
    expect(load.bytes).toBeGreaterThan(10_000);
    expect(load.bytes).toBeLessThanOrEqual(firstLoadBudgetBytes);
    expect(load.bytes).toBeLessThan(load.decodedBytes / 2); // sent compressed
    expect(await seriousViolations(page)).toEqual([]);
    await screenshot(page, 'sign-in');
    // The probe for a loopback grant, which this gateway does not offer.
    expect(opened.httpErrors()).toEqual(['401 /auth/whoami']);
    expect(opened.errors()).toEqual([]);
    expect(opened.offHost()).toEqual([]);
  });

  it('when a wrong token and then the right one are typed, then the API refusal is shown and the right one is kept in this tab only, sent as a bearer header', async () => {
    opened = await openConsole(browser, gateway.url);
    const { page, context } = opened;
    const field = page.getByLabel('Access token');
    await tabTo(page, field);
    await page.keyboard.type('not-a-valid-token-0000');
    await page.keyboard.press('Enter');
    await page.getByRole('alert').getByText('the bearer token is not valid').waitFor();
    expect(await page.evaluate(() => sessionStorage.length)).toBe(0);

    await field.fill('');
    await signIn(page, tokens.operatorOnly.token);

    expect(await page.getByRole('navigation', { name: 'Views' }).innerText()).toBe('Operator');
    await page.getByRole('heading', { name: 'Operator', level: 1 }).waitFor();
    expect(await page.evaluate(() => Object.values<string>(sessionStorage))).toEqual([
      tokens.operatorOnly.token,
    ]);
    expect(await page.evaluate(() => localStorage.length)).toBe(0);
    expect(await context.cookies()).toEqual([]);
    expect(page.url()).not.toContain(tokens.operatorOnly.token);
    const calls = opened.apiRequests();
    expect(calls.map((call) => `${call.method} ${call.path}`)).toEqual([
      'GET /auth/whoami',
      'GET /auth/whoami',
      'GET /auth/whoami',
    ]);
    expect(calls.map((call) => call.authorization)).toEqual([
      undefined,
      'Bearer not-a-valid-token-0000',
      `Bearer ${tokens.operatorOnly.token}`,
    ]);
    expect(calls.every((call) => !call.url.includes('token'))).toBe(true);
    expect(opened.httpErrors()).toEqual(['401 /auth/whoami', '401 /auth/whoami']);
    expect(opened.errors()).toEqual([]);
    expect(opened.offHost()).toEqual([]);
  });

  it('when a view needs a scope the token lacks, then it is not offered, and its address says why; signing out forgets the token', async () => {
    opened = await openConsole(browser, gateway.url);
    const { page } = opened;
    await signIn(page, tokens.operatorOnly.token);

    await page.evaluate(() => (location.hash = '#/search'));
    await page
      .getByText('The Search view needs the search scope, which this token lacks.')
      .waitFor();
    expect(await page.getByRole('link', { name: 'Search' }).count()).toBe(0);
    expect(await page.getByRole('button', { name: 'List elements' }).count()).toBe(0);

    await tabTo(page, page.getByRole('button', { name: 'Sign out' }));
    await page.keyboard.press('Enter');
    await page.getByLabel('Access token').waitFor();
    expect(await page.evaluate(() => sessionStorage.length)).toBe(0);
    expect(opened.errors()).toEqual([]);
    expect(opened.httpErrors()).toEqual(['401 /auth/whoami', '401 /auth/whoami']);
  });

  it('when the fleet lists 1,000 devices, then only the rows on screen are rendered, the page is as long as all of them, the keyboard reaches every row, and a refresh keeps the place and the focus', async () => {
    const fleet = buildFleet(1000);
    let served = fleet;
    opened = await openConsole(browser, gateway.url, {
      hash: '#/fleet',
      token: tokens.all.token,
      clock: true,
    });
    const { page } = opened;
    await serveFleet(page, () => served);
    await page.locator('p.count', { hasText: /^1,000 devices$/ }).waitFor();
    const table = page.getByRole('table', { name: 'Devices' });
    const rows = table.locator('[role=row][data-device]');
    expect(await table.getAttribute('aria-rowcount')).toBe('1001');
    const rendered = await rows.count();
    expect(rendered).toBeGreaterThan(10);
    expect(rendered).toBeLessThan(100);
    expect(await rows.first().getAttribute('aria-rowindex')).toBe('2');
    // The page is as long as 1,000 rows would make it: the scrollbar is the whole fleet's.
    const heights = await page.evaluate(() => ({
      list: document.querySelector('.fleet .rows')!.getBoundingClientRect().height,
      row: document.querySelector('.fleet .rows [role=row]')!.getBoundingClientRect().height,
    }));
    expect(heights.row).toBeGreaterThan(20);
    expect(heights.list).toBeCloseTo(1000 * heights.row, 0);
    expect(await seriousViolations(page)).toEqual([]);

    // End (the keyboard's way to the bottom): the last device is rendered, in view, in its place.
    await page.keyboard.press('End');
    const last = table.locator('[data-device="desk-0999"]');
    await last.waitFor();
    expect(await last.getAttribute('aria-rowindex')).toBe('1001');
    const box = (await last.boundingBox())!;
    expect(box.y + box.height).toBeLessThanOrEqual(800 + 1);
    expect(box.y).toBeGreaterThan(800 - 2 * heights.row);
    expect(await rows.count()).toBeLessThan(100);
    expect(await table.locator('[data-device="desk-0000"]').count()).toBe(0);

    // Back to the top, then Tab from row to row, past the rows first rendered, and back.
    await page.keyboard.press('Home');
    await tabTo(page, table.getByRole('link', { name: 'desk-0000' }));
    const name = (i: number) => `desk-${String(i).padStart(4, '0')}`;
    const beyond = rendered + 15;
    for (let i = 1; i <= beyond; i++) {
      await page.keyboard.press('Tab');
      expect(await focusedLink(page)).toBe(name(i));
    }
    for (let i = beyond - 1; i >= beyond - 12; i--) {
      await page.keyboard.press('Shift+Tab');
      expect(await focusedLink(page)).toBe(name(i));
    }
    const focused = name(beyond - 12);
    expect(await rows.count()).toBeLessThan(100);

    // End scrolls the page away from the focused row: the row stays, with the focus.
    await page.keyboard.press('End');
    await last.waitFor();
    expect(await focusedLink(page)).toBe(focused);
    expect(await rows.count()).toBeLessThan(100);

    // The next poll brings a change to the focused row: it shows, and the place and focus stay.
    const scrolled = await page.evaluate(() => scrollY);
    expect(scrolled).toBeGreaterThan(900 * heights.row);
    served = fleet.map((d) =>
      d.device_name === focused ? { ...d, capture: { ...d.capture, items_last_24h: 4321 } } : d,
    );
    await opened.context.clock.fastForward('00:16');
    await table
      .locator(`[data-device="${focused}"]`)
      .getByText(/\b4,321$/)
      .waitFor();
    expect(await focusedLink(page)).toBe(focused);
    expect(await page.evaluate(() => scrollY)).toBe(scrolled);
    // Tab goes on from the focused row to the next, which the browser scrolls into view.
    await page.keyboard.press('Tab');
    expect(await focusedLink(page)).toBe(name(beyond - 11));
    expect(await page.evaluate(() => scrollY)).toBeLessThan(100 * heights.row);

    // A filter that leaves fewer rows than the screen holds renders them all.
    await page.getByLabel('Device name contains').fill('desk-099');
    await page.locator('p.count', { hasText: /^10 of 1,000 devices$/ }).waitFor();
    expect(await rows.count()).toBe(10);
    expect(await table.getAttribute('aria-rowcount')).toBe('11');
    expect(await seriousViolations(page)).toEqual([]);
    expect(opened.errors()).toEqual([]);
    expect(opened.offHost()).toEqual([]);
  });

  it('when a device is opened, and then another, then each shows whole once its answers came: a status before the first, the one before (marked busy) until the next', async () => {
    opened = await openConsole(browser, gateway.url, { hash: '#/fleet', token: tokens.all.token });
    const { page } = opened;
    await serveFleet(page, () => buildFleet(3));
    await page.locator('p.count', { hasText: /^3 devices$/ }).waitFor();
    const details = {
      'desk-0001': buildDeviceDetail('desk-0001', {
        capture: { ...buildDeviceDetail('desk-0001').capture, items_stored: 1200 },
      }),
      'desk-0002': buildDeviceDetail('desk-0002', {
        capture: { ...buildDeviceDetail('desk-0002').capture, items_stored: 7777 },
      }),
    };
    // Each answer waits until the test lets it go: what the page shows meanwhile is checked.
    const held: Array<() => void> = [];
    const hold = () => new Promise<void>((release) => held.push(release));
    const release = async (count: number) => {
      await waitFor(() => held.length >= count, { timeoutMs: 5_000, what: `${count} requests` });
      held.splice(0).forEach((go) => go());
    };
    await page.route(/\/devices\/desk-000[12]$/, async (route) => {
      const name = new URL(route.request().url()).pathname.split('/').pop() as keyof typeof details;
      await hold();
      await route.fulfill({ json: details[name] });
    });
    await page.route(/\/search\?/, async (route) => {
      await hold();
      await route.fulfill({ json: { data: [], pagination: { limit: 10, offset: 0, total: 0 } } });
    });
    // Every state the page is in after a change: the heading, the items stored, the newest.
    await page.evaluate(() => {
      const states = new Set<string>();
      (window as unknown as { states: Set<string> }).states = states;
      const note = () =>
        states.add(
          [
            document.querySelector('h1')?.textContent,
            document.querySelector('[data-field="items_stored"] dd')?.textContent?.split(' ')[0] ??
              '-',
            document.querySelector('.newest') ? 'newest' : '-',
            document.querySelector('[aria-busy=true]') ? 'busy' : '-',
          ].join(' | '),
        );
      new MutationObserver(note).observe(document.body, {
        subtree: true,
        childList: true,
        characterData: true,
        attributes: true,
      });
    });

    await tabTo(page, page.getByRole('link', { name: 'desk-0001' }));
    await page.keyboard.press('Enter');
    await page.getByRole('status').getByText('Asking the gateway for desk-0001…').waitFor();
    await release(2);
    await page.locator('[data-field="items_stored"] dd', { hasText: /^1,200\b/ }).waitFor();

    // Another device by its address (as Back or Forward, or a link from elsewhere, would).
    await page.evaluate(() => (location.hash = '#/devices/desk-0002'));
    await page.getByRole('status').getByText('opening desk-0002…').waitFor();
    expect(await page.getByRole('heading', { level: 1 }).innerText()).toBe('Device desk-0001');
    expect(await seriousViolations(page)).toEqual([]);
    await release(2);
    await page.getByRole('heading', { name: 'Device desk-0002', level: 1 }).waitFor();
    expect(await page.locator('[data-field="items_stored"] dd').innerText()).toMatch(/^7,777\b/);
    expect(await page.locator('[aria-busy=true]').count()).toBe(0);

    const states = await page.evaluate(() => [
      ...(window as unknown as { states: Set<string> }).states,
    ]);
    expect(states.filter((state) => !state.startsWith('Fleet'))).toEqual([
      'Device desk-0001 | - | - | -',
      'Device desk-0001 | 1,200 | newest | -',
      'Device desk-0001 | 1,200 | newest | busy',
      'Device desk-0002 | 7,777 | newest | -',
    ]);
    expect(opened.errors()).toEqual([]);
  });

  it("when the page and its files are fetched, then the page's policy allows scripts and styles from 'self' only, with nothing inline, and the files are versioned, immutable and compressed", async () => {
    const response = await fetch(`${gateway.url}/console`);
    const html = await response.text();
    const policy = Object.fromEntries(
      (response.headers.get('content-security-policy') ?? '')
        .split(';')
        .map((directive) => directive.trim().split(/\s+/))
        .map(([name, ...values]) => [name ?? '', values]),
    );
    expect(policy['default-src']).toEqual(["'none'"]);
    expect(policy['script-src']).toEqual(["'self'"]);
    expect(policy['style-src']).toEqual(["'self'"]);
    expect(policy['connect-src']).toEqual(["'self'"]);
    expect(response.headers.get('cache-control')).toBe('no-cache');
    expect(html).not.toMatch(/<script(?![^>]*\bsrc=)/);
    expect(html).not.toMatch(/\sstyle=|<style/);
    expect(html).not.toMatch(/(https?:)?\/\/[a-z]/i);

    const main = /<script type="module" src="(\/console\/assets\/[0-9a-f]{16}\/main\.js)">/.exec(
      html,
    )?.[1];
    expect(main).toBeDefined();
    const hooks = main!.replace('main.js', 'vendor/hooks.js');
    const compressed = await fetch(`${gateway.url}${hooks}`, {
      headers: { 'accept-encoding': 'gzip' },
    });
    expect(compressed.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    expect(compressed.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    // fetch decodes gzip itself: the header says it came compressed.
    expect(compressed.headers.get('content-encoding')).toBe('gzip');
    const source = await compressed.text();
    expect(source).toContain('from"./preact.js"');
    expect(source).not.toMatch(/from\s*"preact"/);

    // Only names from the table: an encoded way out of the prefix is not a file.
    const unknown = await fetch(
      `${gateway.url}${main!.replace('main.js', '..%2F..%2Fpackage.json')}`,
    );
    const otherBuild = await fetch(`${gateway.url}/console/assets/0000000000000000/main.js`);
    expect(unknown.status).toBe(404);
    expect(otherBuild.status).toBe(404);
  });
});
