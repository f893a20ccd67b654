import { mkdtempSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { resolveAuth } from '@screenfleet/gateway';
import { isolatedBroker } from '../../../test/services';
import { buildBatch } from '../../../test/support/content';
import { startGateway, type RunningGateway } from '../../../test/support/gateway';

// The rest of what resolveAuth decides needs no file: src/auth/auth-setup.test.ts.
describe('gateway auth set-up', () => {
  let dataDir: string;
  beforeEach(() => {
    dataDir = mkdtempSync(path.join(os.tmpdir(), 'sf-auth-'));
  });
  afterEach(() => rmSync(dataDir, { recursive: true, force: true }));

  const config = (overrides: Partial<Parameters<typeof resolveAuth>[0]> = {}) => ({
    host: '127.0.0.1',
    tokens: undefined,
    allowUnauthenticatedLoopback: false,
    dataDir,
    ...overrides,
  });

  it('when no tokens are configured, then a local token with every scope is generated, kept 0600, and the same after a restart', () => {
    const first = resolveAuth(config());
    const again = resolveAuth(config());

    expect(first.localToken?.entry.token).toMatch(/^sf_[\w-]{32}$/);
    expect(again.localToken?.entry.token).toBe(first.localToken?.entry.token);
    expect(statSync(path.join(dataDir, 'gateway-token')).mode & 0o777).toBe(0o600);
    expect(first.auth.tokens.find(first.localToken!.entry.token)?.scopes).toEqual([
      'ingest',
      'search',
      'operator',
      'archive:read',
      'archive:write',
      'data:delete',
      'metrics',
      'tokens:admin',
      'audit:read',
    ]);
  });
});

describe('the loopback compatibility switch', () => {
  let broker: { url: string; remove(): Promise<void> };
  let gateway: RunningGateway;

  beforeAll(async () => {
    broker = await isolatedBroker();
    gateway = await startGateway(broker.url, {
      allowUnauthenticatedLoopback: true,
      archiveTimeoutMs: 300,
    });
  });
  afterAll(async () => {
    await gateway?.close();
    await broker?.remove();
  });

  const postWithoutToken = (route: string, body: unknown) =>
    fetch(`${gateway.url}${route}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });

  it("when screenpipe's local client posts without a token, then the batch is accepted", async () => {
    const response = await postWithoutToken('/add', buildBatch('compat-1', 0, 2));
    expect(response.status).toBe(200);
  });

  it("when screenpipe's desktop app sets up the archive without a token, then the command reaches the archive worker", async () => {
    // No archive worker runs here: getting past auth means the worker's 503, not a 401/403.
    const response = await postWithoutToken('/archive/init', { retention_days: 7 });
    expect(response.status).toBe(503);
    expect(((await response.json()) as { message: string }).message).toContain(
      'no answer from the archive worker',
    );
  });

  it('when a key press comes without a token, then it is refused even from loopback', async () => {
    const response = await postWithoutToken('/experimental/operator/press-key-by-index', {
      element_index: 0,
      key: 'a',
    });
    expect(response.status).toBe(403);
  });

  it('when a wrong token is sent, then it is refused rather than treated as anonymous', async () => {
    const response = await fetch(`${gateway.url}/add`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'Bearer wrong-token' },
      body: JSON.stringify(buildBatch('compat-1', 0, 1)),
    });
    expect(response.status).toBe(401);
  });
});
