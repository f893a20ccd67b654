/// <reference lib="dom" />
// (The functions this file and the console tests run in the page use the browser's globals.)
/**
 * The console (/console) in Debian's Chromium through playwright-core, for the console's
 * end-to-end tests: a watch on everything the page does that a test must see fail (a console
 * or page error, a request that is not to 127.0.0.1), keyboard-only helpers, axe-core from
 * node_modules, and screenshots under test-output/console (not committed).
 */
import { mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import {
  chromium,
  type Browser,
  type BrowserContext,
  type Locator,
  type Page,
} from 'playwright-core';

/** Debian's chromium binary (/usr/bin/chromium is its launcher script): no browser download. */
export const chromiumPath = '/usr/lib/chromium/chromium';

const root = path.resolve(__dirname, '../..');
export const screenshotDir = path.join(root, 'test-output', 'console');

export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: chromiumPath, args: ['--no-sandbox'] });
}

export interface ApiRequest {
  method: string;
  path: string;
  authorization: string | undefined;
  url: string;
  /** The answer's status once it came. */
  status?: number;
}

export interface ConsolePage {
  context: BrowserContext;
  page: Page;
  /** Console errors, uncaught page errors and CSP reports: each is a defect of the console. */
  errors(): string[];
  /**
   * The API's refusals the browser logged ("Failed to load resource: ... 409"), as
   * `409 /archive/restore`: a test provokes them on purpose and expects exactly those.
   */
  httpErrors(): string[];
  /** Every request the page made to a host other than 127.0.0.1 (each was blocked). */
  offHost(): string[];
  /** The page's calls to the API (not its own files), with their Authorization header. */
  apiRequests(): ApiRequest[];
  close(): Promise<void>;
}

const failedResource = /^Failed to load resource: the server responded with a status of (\d+)/;

/**
 * A fresh browser context (its own sessionStorage) on `url`/console, watched from the start;
 * with `token`, signed in already (as if pasted earlier in this tab).
 */
export async function openConsole(
  browser: Browser,
  url: string,
  options: { hash?: string; clock?: boolean; token?: string } = {},
): Promise<ConsolePage> {
  const context = await browser.newContext({
    viewport: { width: 1200, height: 800 },
    locale: 'en-US',
    timezoneId: 'UTC',
  });
  // Time flows as usual until a test moves it on (context.clock.fastForward).
  if (options.clock) await context.clock.install();
  if (options.token) {
    await context.addInitScript(
      (token) => sessionStorage.setItem('screenfleet.console.token', token),
      options.token,
    );
  }
  const page = await context.newPage();
  const errors: string[] = [];
  const httpErrors: string[] = [];
  const offHost: string[] = [];
  const apiRequests: ApiRequest[] = [];
  page.on('console', (message) => {
    if (message.type() !== 'error' && message.type() !== 'warning') return;
    const status = failedResource.exec(message.text());
    if (status) httpErrors.push(`${status[1]} ${new URL(message.location().url).pathname}`);
    else errors.push(`console.${message.type()}: ${message.text()}`);
  });
  page.on('pageerror', (error) => errors.push(`page error: ${error.message}`));
  const isLocal = (address: string) =>
    /^(data|blob):/.test(address) || new URL(address).hostname === '127.0.0.1';
  const sent = new Map<unknown, ApiRequest>();
  page.on('request', (request) => {
    if (!isLocal(request.url())) offHost.push(request.url());
    const { pathname } = new URL(request.url());
    if (isLocal(request.url()) && !pathname.startsWith('/console')) {
      const call: ApiRequest = {
        method: request.method(),
        path: pathname,
        authorization: request.headers().authorization,
        url: request.url(),
      };
      sent.set(request, call);
      apiRequests.push(call);
    }
  });
  page.on('response', (response) => {
    const call = sent.get(response.request());
    if (call) call.status = response.status();
  });
  // And none leaves the machine, even one the page's policy would not stop.
  await page.route('**/*', (route) =>
    isLocal(route.request().url()) ? route.continue() : route.abort('blockedbyclient'),
  );
  const response = await page.goto(`${url}/console${options.hash ?? ''}`);
  if (response?.status() !== 200) throw new Error(`GET /console answered ${response?.status()}`);
  return {
    context,
    page,
    errors: () => [...errors],
    httpErrors: () => [...httpErrors],
    offHost: () => [...offHost],
    apiRequests: () => [...apiRequests],
    close: () => context.close(),
  };
}

/** Presses Tab until `target` has the focus (at most `max` times): how a keyboard user gets there. */
export async function tabTo(page: Page, target: Locator, max = 80): Promise<void> {
  await target.waitFor();
  for (let i = 0; i < max; i++) {
    await page.keyboard.press('Tab');
    if (await target.evaluate((element) => element === document.activeElement)) return;
  }
  throw new Error(`Tab did not reach ${target.toString()} in ${max} presses`);
}

/** Presses `key` (an arrow in a radio group) until `target` has the focus. */
export async function arrowTo(page: Page, target: Locator, key = 'ArrowDown', max = 600) {
  for (let i = 0; i < max; i++) {
    if (await target.evaluate((element) => element === document.activeElement)) return;
    await page.keyboard.press(key);
  }
  throw new Error(`${key} did not reach ${target.toString()} in ${max} presses`);
}

/** Signs in with `token` using the keyboard only ("Use a token" first on the loopback grant). */
export async function signIn(page: Page, token: string): Promise<void> {
  const field = page.getByLabel('Access token');
  const useToken = page.getByRole('button', { name: 'Use a token' });
  await Promise.race([field.waitFor(), useToken.waitFor()]);
  if (await useToken.isVisible()) {
    await tabTo(page, useToken);
    await page.keyboard.press('Enter');
  }
  await tabTo(page, field);
  await page.keyboard.type(token);
  await page.keyboard.press('Enter');
  await page.getByRole('button', { name: 'Sign out' }).waitFor();
}

const axeSource = readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');

export interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  targets: string[];
}

/**
 * axe-core's serious and critical violations on the page as it is now. axe is evaluated through
 * the DevTools protocol, which the page's script policy does not govern: the page keeps its
 * policy (a script tag would need 'unsafe-inline').
 */
export async function seriousViolations(page: Page): Promise<AxeViolation[]> {
  await page.evaluate(axeSource);
  const violations = await page.evaluate(async () => {
    const axe = (window as unknown as { axe: { run(): Promise<{ violations: unknown[] }> } }).axe;
    return (await axe.run()).violations as Array<{
      id: string;
      impact: string | null;
      help: string;
      nodes: Array<{ target: string[] }>;
    }>;
  });
  return violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => ({
      id: v.id,
      impact: v.impact,
      help: v.help,
      targets: v.nodes.map((node) => node.target.join(' ')),
    }));
}

/** A PNG of what the window shows under test-output/console/<name>.png. */
export async function screenshot(page: Page, name: string): Promise<void> {
  mkdirSync(screenshotDir, { recursive: true });
  await page.screenshot({ path: path.join(screenshotDir, `${name}.png`) });
}

/**
 * What the first load of the page cost: the bytes of its scripts and stylesheets as they came
 * over the wire (compressed), from the Performance API's resource timings.
 */
export async function firstLoadBytes(
  page: Page,
): Promise<{ bytes: number; decodedBytes: number; files: number }> {
  return page.evaluate(() => {
    const assets = performance
      .getEntriesByType('resource')
      .filter((entry) => /\.(js|css)$/.test(new URL(entry.name).pathname))
      .map((entry) => entry as PerformanceResourceTiming);
    return {
      bytes: assets.reduce((sum, entry) => sum + entry.encodedBodySize, 0),
      decodedBytes: assets.reduce((sum, entry) => sum + entry.decodedBodySize, 0),
      files: assets.length,
    };
  });
}
