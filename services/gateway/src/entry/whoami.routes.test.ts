import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { validators } from '@screenfleet/contracts';
import type { Bus } from '@screenfleet/bus';
import { createLogger, createMetrics } from '@screenfleet/runtime';
import { createGatewayApp } from '../app';
import { createTokenRegistry, type TokenEntry } from '../auth/tokens';
import { createGatewayMetrics } from '../index';
import { createOperatorPresence } from '../domain/operator-presence';
import { whoAmIPath } from './whoami.routes';

const reader: TokenEntry = {
  id: 'console-reader',
  token: 'whoami-test-token-reader-01',
  scopes: ['search', 'archive:read'],
  devices: ['desk-1', 'desk-2'],
};
const operator: TokenEntry = {
  id: 'console-operator',
  token: 'whoami-test-token-operator-01',
  scopes: ['operator'],
};

// The whole app on a loopback port (the route never touches the bus).
async function startApp(allowUnauthenticatedLoopback: boolean) {
  const bus = {} as Bus;
  const logger = createLogger({ service: 'test', level: 'silent' });
  const app = createGatewayApp(
    {
      bus,
      auth: { tokens: createTokenRegistry([reader, operator]), allowUnauthenticatedLoopback },
      metrics: createGatewayMetrics(createMetrics()),
      logger,
    },
    createOperatorPresence({ bus, logger }),
  );
  const server = await new Promise<Server>((resolve) => {
    const listening = app.listen(0, '127.0.0.1', () => resolve(listening));
  });
  return { server, base: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

async function whoAmI(base: string, headers: Record<string, string> = {}) {
  const response = await fetch(`${base}${whoAmIPath}`, { headers });
  return {
    status: response.status,
    headers: response.headers,
    body: await response.json(),
  };
}

describe('GET /auth/whoami', () => {
  let strict: { server: Server; base: string };
  let loopback: { server: Server; base: string };

  beforeAll(async () => {
    strict = await startApp(false);
    loopback = await startApp(true);
  });
  afterAll(async () => {
    for (const { server } of [strict, loopback]) {
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it("when asked with a token, then it answers the token's id, scopes and devices, never the token", async () => {
    const bound = await whoAmI(strict.base, { authorization: `Bearer ${reader.token}` });
    const unbound = await whoAmI(strict.base, { authorization: `Bearer ${operator.token}` });

    expect(bound).toMatchObject({
      status: 200,
      body: {
        token_id: 'console-reader',
        grant: 'token',
        scopes: ['search', 'archive:read'],
        devices: ['desk-1', 'desk-2'],
      },
    });
    expect(unbound.body).toEqual({
      token_id: 'console-operator',
      grant: 'token',
      scopes: ['operator'],
      devices: null,
    });
    expect(validators.whoAmI.check(bound.body)).toEqual([]);
    expect(JSON.stringify(bound.body)).not.toContain(reader.token);
    expect(bound.headers.get('cache-control')).toBe('no-store');
  });

  it('when asked without a token and no loopback grant, or with a token that is not valid, then 401', async () => {
    expect((await whoAmI(strict.base)).status).toBe(401);
    const wrong = await whoAmI(loopback.base, { authorization: 'Bearer not-a-token-0000000' });
    expect(wrong).toMatchObject({ status: 401, body: { success: false } });
  });

  it("when asked without a token where the loopback grant applies, then it answers that grant's scopes, without operator", async () => {
    const anonymous = await whoAmI(loopback.base);

    expect(anonymous).toMatchObject({
      status: 200,
      body: { grant: 'loopback', token_id: 'unauthenticated-loopback', devices: null },
    });
    const scopes = (anonymous.body as { scopes: string[] }).scopes;
    expect(scopes).toEqual(expect.arrayContaining(['search', 'archive:read']));
    expect(scopes).not.toContain('operator');
  });

  it('when a tokenless request comes from a page of another origin (DNS rebinding), then it is refused as on every route', async () => {
    const response = await whoAmI(loopback.base, { origin: 'http://attacker.example' });
    expect(response).toMatchObject({ status: 403, body: { success: false } });
  });
});
