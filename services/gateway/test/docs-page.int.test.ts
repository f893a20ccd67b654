import { chromium, type Browser } from 'playwright-core';
import { buildOpenApiDocument } from '@screenfleet/contracts';
import { isolatedBroker } from '../../../test/services';
import { startGateway, type RunningGateway } from '../../../test/support/gateway';

// Debian's chromium: playwright-core downloads no browser here.
const chromiumPath = '/usr/lib/chromium/chromium';

describe('GET /docs in a real headless Chromium', () => {
  let broker: { url: string; remove(): Promise<void> };
  let gateway: RunningGateway;
  let browser: Browser;

  beforeAll(async () => {
    broker = await isolatedBroker();
    gateway = await startGateway(broker.url);
    browser = await chromium.launch({ executablePath: chromiumPath, args: ['--no-sandbox'] });
  });
  afterAll(async () => {
    await browser?.close();
    await gateway?.close();
    await broker?.remove();
  });

  it('when the page is opened, then it renders every documented path with no error and nothing fetched from elsewhere', async () => {
    const page = await browser.newPage();
    const consoleErrors: string[] = [];
    const pageErrors: string[] = [];
    const failedRequests: string[] = [];
    const externalRequests: string[] = [];
    page.on('console', (message) => {
      if (message.type() === 'error') consoleErrors.push(message.text());
    });
    page.on('pageerror', (error) => pageErrors.push(error.message));
    page.on('requestfailed', (request) =>
      failedRequests.push(`${request.url()} ${request.failure()?.errorText ?? ''}`),
    );
    page.on('response', (response) => {
      if (response.status() >= 400) failedRequests.push(`${response.url()} ${response.status()}`);
    });
    // Any request to another host counts, even one the page's CSP stops before it is routed.
    const isLocal = (url: string) =>
      /^(data|blob):/.test(url) || new URL(url).hostname === '127.0.0.1';
    page.on('request', (request) => {
      if (!isLocal(request.url())) externalRequests.push(request.url());
    });
    // And none leaves the machine.
    await page.route('**/*', (route) =>
      isLocal(route.request().url()) ? route.continue() : route.abort('blockedbyclient'),
    );

    const response = await page.goto(`${gateway.url}/docs`);
    expect(response?.status()).toBe(200);
    // Redoc has rendered once its operations are in the page.
    await page.waitForSelector('[data-section-id^="operation/"]', { timeout: 30_000 });
    await page.waitForLoadState('networkidle');
    const text = await page.locator('body').innerText();

    const paths = Object.keys(buildOpenApiDocument().paths as Record<string, unknown>);
    expect(paths.length).toBeGreaterThan(5);
    expect(paths.filter((path) => !text.includes(path))).toEqual([]);
    expect(externalRequests).toEqual([]);
    expect(failedRequests).toEqual([]);
    expect(pageErrors).toEqual([]);
    expect(consoleErrors).toEqual([]);
    await page.close();
  });
});
