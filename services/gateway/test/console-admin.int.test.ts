/**
 * The console's Tokens and Audit views (issue 40) in a real headless Chromium. The page and its
 * files come from a real gateway (built as main.ts builds it, on this run's RabbitMQ), but every
 * API call these views make is answered by the page's route with canned answers shaped by the
 * contracts (tokens.routes.ts, audit.route.ts): the views are tested on their own, whether or
 * not the gateway serves those routes yet. GET /auth/whoami is canned too, to grant the scopes.
 */
import type { Browser, Page, Request, Route } from 'playwright-core';
import type {
  AuditPageView,
  AuditRowView,
  EnrolmentCodeView,
  TokenView,
  WhoAmI,
} from '@screenfleet/contracts';
import { isolatedBroker } from '../../../test/services';
import {
  launchChromium,
  openConsole,
  screenshot,
  seriousViolations,
  tabTo,
  type ConsolePage,
} from '../../../test/support/console-browser';
import { startGateway, tokens, type RunningGateway } from '../../../test/support/gateway';

const buildToken = (overrides: Partial<TokenView> = {}): TokenView => ({
  id: 'tok_3f9c2a7d41b0e865',
  name: 'desk-17',
  scopes: ['ingest'],
  devices: ['desk-17'],
  created_at: '2026-11-29T10:00:00.000Z',
  expires_at: null,
  last_used_at: '2026-11-29T10:41:00.000Z',
  revoked_at: null,
  rate_limits: null,
  ...overrides,
});

const buildCode = (overrides: Partial<EnrolmentCodeView> = {}): EnrolmentCodeView => ({
  id: 'enr_0b7e41c29a5d3f16',
  name: 'lab desktops',
  scopes: ['ingest'],
  device_pattern: 'lab-*',
  uses: 200,
  uses_left: 199,
  created_at: '2026-11-29T09:00:00.000Z',
  expires_at: '2030-12-06T09:00:00.000Z',
  revoked_at: null,
  ...overrides,
});

const buildRow = (overrides: Partial<AuditRowView> = {}): AuditRowView => ({
  id: 'row-1',
  at: '2026-11-29T10:42:07.312Z',
  actor: 'tok_3f9c2a7d41b0e865',
  action: 'operator.press',
  device: 'desk-17',
  outcome: 'ok',
  outcome_code: null,
  duration_ms: 84,
  details: { element_index: 12, key: 'a', modifiers: ['ctrl'] },
  ...overrides,
});

const tokenSecret = 'sf_q6D8Yw3kZr0pJ2xVnL5bT9uHc4mE7sAaGfKiR1oWdXy';
const codeSecret = 'sfe_Vt0x8JmQ2cR5aLk9WnZ3pE7yHs1uBd4gFoTiXq6rNvM';

/** A call the page made to a canned route: method, path, query and JSON body. */
interface Call {
  method: string;
  path: string;
  query: URLSearchParams;
  body: unknown;
}
const callOf = (request: Request): Call => {
  const url = new URL(request.url());
  return {
    method: request.method(),
    path: url.pathname,
    query: url.searchParams,
    body: request.postData() ? (request.postDataJSON() as unknown) : undefined,
  };
};

/**
 * GET /auth/whoami answered with `scopes`, `routes` answering the views' calls (each call
 * recorded), and the page reloaded to ask again: the console as such a token would see it.
 */
async function serve(
  page: Page,
  scopes: string[],
  routes: Record<string, (call: Call) => { status?: number; json: unknown }>,
): Promise<Call[]> {
  // The page's first answers (from the gateway itself) come before these routes, not after.
  await page.waitForLoadState('networkidle');
  const calls: Call[] = [];
  const who: WhoAmI = { token_id: 'admin-console', grant: 'token', scopes, devices: null };
  await page.route('**/auth/whoami', (route) => route.fulfill({ json: who }));
  await page.route(/\/(tokens|enrolment-codes|audit)(\/|\?|$)/, (route: Route) => {
    const call = callOf(route.request());
    calls.push(call);
    const key = `${call.method} ${call.path.replace(/\/(tok|enr)_[0-9a-f]{16}$/, '/{id}')}`;
    const answer = routes[key];
    if (!answer) return route.fulfill({ status: 404, json: { message: `no canned ${key}` } });
    const { status = 200, json } = answer(call);
    return route.fulfill({ status, json });
  });
  await page.reload();
  return calls;
}

const storedEverywhere = (page: Page) =>
  page.evaluate(() => JSON.stringify({ ...sessionStorage }) + JSON.stringify({ ...localStorage }));

describe("the console's Tokens and Audit views in a real headless Chromium, on canned answers", () => {
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

  it('when the token lacks tokens:admin and audit:read, then neither view is offered; with them, both are', async () => {
    opened = await openConsole(browser, gateway.url, { hash: '#/tokens', token: tokens.all.token });
    const { page } = opened;
    await serve(page, ['search', 'operator'], {});
    const nav = page.getByRole('navigation', { name: 'Views' });
    await page
      .getByText('The Tokens view needs the tokens:admin scope, which this token lacks.')
      .waitFor();
    expect(await nav.getByRole('link', { name: 'Tokens' }).count()).toBe(0);
    expect(await nav.getByRole('link', { name: 'Audit' }).count()).toBe(0);

    await serve(page, ['search', 'tokens:admin', 'audit:read'], {
      'GET /tokens': () => ({ json: { tokens: [] } }),
      'GET /enrolment-codes': () => ({ json: { codes: [] } }),
    });
    await page.getByRole('heading', { name: 'Tokens', level: 1 }).waitFor();
    expect(await nav.innerText()).toMatch(/Tokens\s+Audit$/);
    expect(opened.errors()).toEqual([]);
  });

  it('when a token is created, then the body is the form mapped, and the secret is shown once, copyable, kept nowhere; the API error is shown as it came', async () => {
    opened = await openConsole(browser, gateway.url, { hash: '#/tokens', token: tokens.all.token });
    const { page, context } = opened;
    await context.grantPermissions(['clipboard-read', 'clipboard-write']);
    let listed = [buildToken()];
    let refuse = true;
    const calls = await serve(page, ['tokens:admin'], {
      'GET /tokens': (call) => ({
        json: {
          tokens:
            call.query.get('include_revoked') === 'true'
              ? [
                  ...listed,
                  buildToken({
                    id: 'tok_00000000000000aa',
                    name: 'old',
                    revoked_at: '2026-11-28T09:00:00.000Z',
                  }),
                ]
              : listed,
        },
      }),
      'GET /enrolment-codes': () => ({ json: { codes: [] } }),
      'POST /tokens': (call) => {
        if (refuse) {
          refuse = false;
          return {
            status: 400,
            json: {
              code: 'validation_failed',
              message: 'the token request is not valid',
              errors: [
                { path: '/scopes', rule: 'minItems', detail: 'must NOT have fewer than 1 items' },
              ],
            },
          };
        }
        const body = call.body as { name: string; scopes: TokenView['scopes'] };
        const token = buildToken({
          id: 'tok_1111111111111111',
          name: body.name,
          scopes: body.scopes,
          last_used_at: null,
        });
        listed = [...listed, token];
        return { status: 201, json: { token, secret: tokenSecret } };
      },
    });
    const list = page.locator('section[aria-labelledby=token-list]');
    await list.locator('tr[data-id=tok_3f9c2a7d41b0e865]').waitFor();
    expect(await list.locator('caption').innerText()).toBe('1 token, oldest first');

    // Show revoked: asked with include_revoked=true, the revoked one listed without a Revoke.
    await page.getByLabel('Show revoked tokens').check();
    await list.locator('tr[data-id=tok_00000000000000aa].revoked').waitFor();
    expect(await list.getByRole('button', { name: 'Revoke token old' }).count()).toBe(0);
    expect(calls.filter((c) => c.path === '/tokens').map((c) => c.query.toString())).toEqual([
      '',
      'include_revoked=true',
    ]);

    // The first try is refused: the API's message and field are shown.
    await page.locator('#token-name').fill('  ci runner ');
    await page.getByRole('button', { name: 'Create token' }).click();
    const refusal = page.getByRole('alert').filter({ hasText: 'The token was not created' });
    await refusal.getByText('the token request is not valid').waitFor();
    expect(await refusal.innerText()).toContain('/scopes');
    expect(await refusal.innerText()).toContain('HTTP 400');

    await page.locator('#token-scope-search').check();
    await page.locator('#token-scope-ingest').check();
    await page.getByLabel('Devices (optional)').fill('desk-1, desk-2');
    await page.locator('#token-expires').fill('2030-12-06T09:30');
    await page.getByRole('button', { name: 'Create token' }).click();
    const box = page.getByRole('group', { name: /The new token “ci runner”: copy it now/ });
    await box.waitFor();
    expect(await box.innerText()).toContain('It is not shown again.');
    expect(await box.getByLabel("The token's secret").inputValue()).toBe(tokenSecret);
    expect(calls.filter((c) => c.method === 'POST').map((c) => c.body)).toEqual([
      { name: 'ci runner', scopes: [] },
      {
        name: 'ci runner',
        scopes: ['ingest', 'search'],
        devices: ['desk-1', 'desk-2'],
        expires_at: '2030-12-06T09:30:00.000Z',
      },
    ]);
    // The heading of the box takes the focus; the list is asked again and shows the new token.
    expect(await page.evaluate(() => document.activeElement?.textContent)).toContain('ci runner');
    await list.locator('tr[data-id=tok_1111111111111111]').waitFor();
    expect(await page.locator('#token-name').inputValue()).toBe('');

    await box.getByRole('button', { name: 'Copy' }).click();
    await box.getByRole('status').getByText('Copied to the clipboard.').waitFor();
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(tokenSecret);
    expect(await storedEverywhere(page)).not.toContain(tokenSecret);
    expect(page.url()).not.toContain(tokenSecret);
    expect(await seriousViolations(page)).toEqual([]);
    await screenshot(page, 'tokens-secret');

    await box.getByRole('button', { name: 'I have copied it: hide it' }).click();
    await box.waitFor({ state: 'detached' });
    expect(await page.content()).not.toContain(tokenSecret);
    expect(opened.httpErrors()).toEqual(['400 /tokens']);
    expect(opened.errors()).toEqual([]);
    expect(opened.offHost()).toEqual([]);
  });

  it('when a token and an enrolment code are revoked, then each is confirmed first, naming it, and DELETE is sent only on the confirmation', async () => {
    opened = await openConsole(browser, gateway.url, { hash: '#/tokens', token: tokens.all.token });
    const { page } = opened;
    let token = buildToken();
    const code = buildCode();
    const calls = await serve(page, ['tokens:admin'], {
      'GET /tokens': () => ({ json: { tokens: token.revoked_at ? [] : [token] } }),
      'GET /enrolment-codes': () => ({ json: { codes: code.revoked_at ? [] : [code] } }),
      'DELETE /tokens/{id}': () => {
        token = { ...token, revoked_at: '2026-11-29T11:02:00.000Z' };
        return { json: { token } };
      },
      'DELETE /enrolment-codes/{id}': () => ({
        status: 503,
        json: { code: 'store_unavailable', message: 'the token store did not answer in time' },
      }),
    });

    // Cancel first: nothing is sent. Then by the keyboard: Tab to Revoke, Enter, Enter.
    await page.getByRole('button', { name: 'Revoke token desk-17' }).click();
    const question = page.getByRole('group', {
      name: 'Revoke the token “desk-17” (tok_3f9c2a7d41b0e865)?',
    });
    await question.waitFor();
    await question.getByRole('button', { name: 'Cancel' }).click();
    await question.waitFor({ state: 'detached' });
    await tabTo(page, page.getByRole('button', { name: 'Revoke token desk-17' }));
    await page.keyboard.press('Enter');
    await question.waitFor();
    expect(await question.innerText()).toContain('This cannot be undone.');
    expect(await seriousViolations(page)).toEqual([]);
    await tabTo(page, question.getByRole('button', { name: 'Revoke “desk-17”' }));
    await page.keyboard.press('Enter');
    await page.getByRole('status').getByText('Revoked “desk-17” (tok_3f9c2a7d41b0e865).').waitFor();
    await page.getByText('No tokens stored.').waitFor();

    // The code's revoke fails: the API's message, and the code stays listed.
    await page.getByRole('button', { name: 'Revoke enrolment code lab desktops' }).click();
    await page
      .getByRole('group', { name: /Revoke the enrolment code “lab desktops”/ })
      .getByRole('button', { name: 'Revoke “lab desktops”' })
      .click();
    await page
      .getByRole('alert')
      .filter({ hasText: 'Not revoked' })
      .getByText('the token store did not answer in time')
      .waitFor();
    expect(await page.locator('tr[data-id=enr_0b7e41c29a5d3f16]').count()).toBe(1);

    expect(calls.filter((c) => c.method === 'DELETE').map((c) => c.path)).toEqual([
      '/tokens/tok_3f9c2a7d41b0e865',
      '/enrolment-codes/enr_0b7e41c29a5d3f16',
    ]);
    expect(opened.httpErrors()).toEqual(['503 /enrolment-codes/enr_0b7e41c29a5d3f16']);
    expect(opened.errors()).toEqual([]);
  });

  it('when an enrolment code is created, then pattern, uses and expiry are sent and the code is shown once', async () => {
    opened = await openConsole(browser, gateway.url, { hash: '#/tokens', token: tokens.all.token });
    const { page } = opened;
    const codes: EnrolmentCodeView[] = [];
    const calls = await serve(page, ['tokens:admin'], {
      'GET /tokens': () => ({ json: { tokens: [] } }),
      'GET /enrolment-codes': () => ({ json: { codes } }),
      'POST /enrolment-codes': () => {
        codes.push(buildCode({ uses_left: 200 }));
        return { status: 201, json: { code: codes[0], secret: codeSecret } };
      },
    });
    await page.getByText('No enrolment codes.').waitFor();
    await page.locator('#code-name').fill('lab desktops');
    await page.locator('#code-scope-search').check(); // ingest is ticked already
    await page.getByLabel('Device names it enrols').fill('lab-*');
    await page.getByLabel('Uses').fill('200');
    await page.locator('#code-expires').fill('2030-12-06T09:00');
    await page.getByRole('button', { name: 'Create enrolment code' }).click();
    const box = page.getByRole('group', { name: /The new enrolment code “lab desktops”/ });
    await box.waitFor();
    expect(await box.getByLabel("The enrolment code's secret").inputValue()).toBe(codeSecret);
    expect(calls.find((c) => c.method === 'POST')?.body).toEqual({
      name: 'lab desktops',
      scopes: ['ingest', 'search'],
      device_pattern: 'lab-*',
      uses: 200,
      expires_at: '2030-12-06T09:00:00.000Z',
    });
    await page.locator('tr[data-id=enr_0b7e41c29a5d3f16]').getByText('200 of 200').waitFor();
    expect(await storedEverywhere(page)).not.toContain(codeSecret);
    expect(opened.errors()).toEqual([]);
  });

  it('when the audit trail is filtered and paged, then the filters are sent and kept in the address, and older rows are appended by next_cursor', async () => {
    opened = await openConsole(browser, gateway.url, { hash: '#/audit', token: tokens.all.token });
    const { page } = opened;
    const first: AuditPageView = {
      rows: [
        buildRow(),
        buildRow({
          id: 'row-2',
          at: '2026-11-29T10:40:00.000Z',
          action: 'operator.click',
          outcome: 'refused',
          outcome_code: 'device_not_allowed',
          duration_ms: 1234,
        }),
      ],
      next_cursor: 'cursor-page-2',
    };
    const older: AuditPageView = {
      rows: [
        buildRow({
          id: 'row-3',
          at: '2026-11-29T09:00:00.000Z',
          action: 'token.create',
          device: null,
          duration_ms: null,
          details: { token_id: 'tok_1111111111111111', name: 'ci runner', scopes: ['ingest'] },
        }),
      ],
      next_cursor: null,
    };
    let failNext = false;
    const calls = await serve(page, ['audit:read'], {
      'GET /audit': (call) =>
        failNext
          ? {
              status: 400,
              json: {
                code: 'validation_failed',
                message: 'the audit query is not valid',
                errors: [],
              },
            }
          : { json: call.query.get('cursor') === 'cursor-page-2' ? older : first },
    });
    const table = page.locator('table.audit');
    await table.locator('tr[data-id=row-2]').waitFor();
    const cells = await table.locator('tr[data-id=row-2] td').allInnerTexts();
    expect(cells.slice(1)).toEqual([
      'tok_3f9c2a7d41b0e865',
      'operator.click',
      'desk-17',
      'refused (device_not_allowed)',
      '1.2 s',
      'element_index=12 key=a modifiers=ctrl',
    ]);
    expect(cells[0]).toContain('Nov 29, 2026');
    expect(await seriousViolations(page)).toEqual([]);
    await screenshot(page, 'audit');

    await page.getByRole('button', { name: 'Older rows' }).click();
    await table.locator('tr[data-id=row-3]').waitFor();
    expect(await table.locator('tbody tr').count()).toBe(3);
    expect(await table.locator('tr[data-id=row-3] td').nth(6).innerText()).toBe(
      'token_id=tok_1111111111111111 name="ci runner" scopes=ingest',
    );
    await page.getByText('No older rows.').waitFor();
    expect(
      await page.getByRole('button', { name: 'Older rows' }).getAttribute('aria-disabled'),
    ).toBe('true');

    await page.getByLabel('Device').fill('desk-17');
    await page.getByLabel('Action').selectOption('operator.press');
    await page.getByLabel('From (local time)').fill('2026-11-29T10:00');
    await page.getByRole('button', { name: 'Show rows' }).click();
    await page.waitForFunction(() => location.hash.includes('action=operator.press'));
    // The old table goes as soon as the filters change, before the new query is even sent:
    // wait for the new answer's rows (the first page again) before reading what was asked.
    await table.locator('tr[data-id=row-3]').waitFor({ state: 'detached' });
    await table.locator('tr[data-id=row-2]').waitFor();
    const asked = calls.filter((c) => c.path === '/audit').map((c) => c.query.toString());
    expect(asked).toEqual([
      'limit=100',
      'limit=100&cursor=cursor-page-2',
      'device=desk-17&action=operator.press&from=2026-11-29T10%3A00%3A00.000Z&limit=100',
    ]);
    expect(new URL(page.url()).hash).toBe(
      '#/audit?device=desk-17&action=operator.press&from=2026-11-29T10%3A00%3A00.000Z',
    );

    // A reload keeps the filters (from the address); a refusal shows the API's message.
    failNext = true;
    await page.reload();
    await page.getByRole('alert').getByText('the audit query is not valid').waitFor();
    expect(await page.getByLabel('Device').inputValue()).toBe('desk-17');
    expect(await page.getByLabel('From (local time)').inputValue()).toBe('2026-11-29T10:00');
    expect(opened.httpErrors()).toEqual(['400 /audit']);
    expect(opened.errors()).toEqual([]);
    expect(opened.offHost()).toEqual([]);
  });
});
