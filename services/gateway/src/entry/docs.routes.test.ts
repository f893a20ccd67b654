import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import type { Bus } from '@screenfleet/bus';
import { createLogger, createMetrics } from '@screenfleet/runtime';
import { createGatewayApp } from '../app';
import { createTokenRegistry } from '../auth/tokens';
import { createGatewayMetrics } from '../index';
import { createOperatorPresence } from '../domain/operator-presence';
import { docsBundlePath, docsPath } from './docs.routes';

// The whole app on a loopback port (no broker: these routes never touch the bus), so the test
// also proves the page needs no token and that the method guard knows its paths.
describe('the API reference page', () => {
  let server: Server;
  let base: string;

  beforeAll(async () => {
    const bus = {} as Bus;
    const logger = createLogger({ service: 'test', level: 'silent' });
    const app = createGatewayApp(
      {
        bus,
        auth: { tokens: createTokenRegistry([]), allowUnauthenticatedLoopback: false },
        metrics: createGatewayMetrics(createMetrics()),
        logger,
      },
      createOperatorPresence({ bus, logger }),
    );
    server = await new Promise<Server>((resolve) => {
      const listening = app.listen(0, '127.0.0.1', () => resolve(listening));
    });
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
  });

  it('when GET /docs without a token, then it answers an HTML page that loads the local bundle', async () => {
    const response = await fetch(`${base}${docsPath}`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/html/);
    const html = await response.text();
    expect(html).toContain('<redoc spec-url="/openapi.json"');
    expect(html).toContain(`<script src="${docsBundlePath}"></script>`);
    // Nothing from the internet, and no inline script for the policy to forbid.
    expect(html).not.toMatch(/(https?:)?\/\/[a-z]/i);
    expect(html).not.toMatch(/<script>/);
  });

  it("when GET /docs, then its Content-Security-Policy allows scripts from 'self' only", async () => {
    const response = await fetch(`${base}${docsPath}`);
    const policy: Record<string, string[]> = Object.fromEntries(
      (response.headers.get('content-security-policy') ?? '')
        .split(';')
        .map((directive) => directive.trim().split(/\s+/))
        .map(([name, ...values]) => [name ?? '', values]),
    );
    expect(policy['default-src']).toEqual(["'none'"]);
    expect(policy['script-src']).toEqual(["'self'"]);
    expect(policy['style-src']).toEqual(["'self'", "'unsafe-inline'"]);
    expect(policy['connect-src']).toEqual(["'self'"]);
    expect(response.headers.get('x-content-type-options')).toBe('nosniff');
  });

  it('when the bundle is asked for, then it is JavaScript cached for a year as immutable', async () => {
    expect(docsBundlePath).toMatch(/^\/docs\/assets\/redoc-\d+\.\d+\.\d+\.standalone\.js$/);
    const response = await fetch(`${base}${docsBundlePath}`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/javascript/);
    expect(response.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    const body = await response.text();
    expect(body.length).toBeGreaterThan(100_000);
    expect(body).toContain('Redoc');
    // Its one internet URL, the footer logo, is not in what is served.
    expect(body).not.toContain('cdn.redoc.ly');
  });

  it('when another asset or method is asked for, then it is a 404 or a 405 naming GET', async () => {
    expect((await fetch(`${base}/docs/assets/other.js`)).status).toBe(404);
    const post = await fetch(`${base}${docsPath}`, { method: 'POST' });
    expect(post.status).toBe(405);
    expect(post.headers.get('allow')).toBe('GET');
  });
});
