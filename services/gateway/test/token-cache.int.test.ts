import { createHash, randomBytes } from 'node:crypto';
import {
  createEnvelope,
  exchangeNames,
  queueNames,
  topology,
  validators,
  type HeldToken,
  type TokensReply,
  type TokensRequest,
} from '@screenfleet/contracts';
import { createAmqpBus, type Bus } from '@screenfleet/bus';
import { gatewayConfigSpec, gatewayService } from '@screenfleet/gateway';
import {
  createLogger,
  createMetrics,
  loadConfig,
  waitFor,
  withoutServerVars,
  type Registry,
} from '@screenfleet/runtime';
import { closeBrokerConnections, isolatedBroker, uniqueName } from '../../../test/services';

// ADR 0019 on the real broker: gateways built by gatewayService.start (the wiring main.ts runs),
// a test-side tokens.rpc server standing in for the ingest workers, tokens.changed published on
// the tokens.events exchange as a worker or the CLI would.

const logger = createLogger({ service: 'gateway', level: 'silent' });
const admin = { id: 'int-admin', token: 'token-cache-int-admin-0001', scopes: ['tokens:admin'] };

function busOn(url: string, connectionName: string): Promise<Bus> {
  return createAmqpBus({
    url,
    topology,
    connectionName,
    logger,
    reconnect: { initialMs: 50, maxMs: 1000 },
  });
}

/** A stored token and its secret, as the workers would hold it (the hash only). */
function buildStoredToken(): { secret: string; held: HeldToken } {
  const secret = `sf_${randomBytes(32).toString('base64url')}`;
  return {
    secret,
    held: {
      id: `tok_${randomBytes(8).toString('hex')}`,
      scopes: ['search'],
      devices: null,
      expires_at_ms: null,
      rate_limits: null,
      secret_hash: createHash('sha256').update(secret).digest('hex'),
    },
  };
}

/** tokens.rpc.v1 answered from `tokens` (snapshot) and into `uses` (used), on its own connection. */
async function startTokensServer(url: string, tokens: HeldToken[] = []) {
  const bus = await busOn(url, uniqueName('tokens-server'));
  const server = {
    tokens,
    uses: [] as Array<{ id: string; at_ms: number }>,
    /** What a worker sends after a write: every gateway loads a new snapshot. */
    announce: (reason: string) =>
      bus.publish(exchangeNames.tokensEvents, '', createEnvelope('tokens.changed', { reason })),
    close: async () => {
      await subscription.cancel();
      await bus.close();
    },
  };
  const subscription = await bus.serve<unknown, TokensReply>(queueNames.tokensRpc, (request) => {
    const asked = request.payload as TokensRequest;
    let reply: TokensReply;
    if (validators.tokensRequest.check(asked).length > 0)
      reply = { outcome: 'refused', code: 'validation_failed', message: 'not a tokens request' };
    else if (asked.op === 'snapshot') reply = { outcome: 'snapshot', tokens: [...server.tokens] };
    else if (asked.op === 'used') {
      server.uses.push(...asked.uses);
      reply = { outcome: 'recorded' };
    } else reply = { outcome: 'refused', code: 'failed', message: `no ${asked.op} here` };
    return Promise.resolve(
      createEnvelope('tokens.reply', reply, { correlationId: request.correlation_id }),
    );
  });
  return server;
}

interface TestGateway {
  url: string;
  /** Its broker connection's name, to close it from the broker's side. */
  connectionName: string;
  registry: Registry;
  checks(): Record<string, boolean | string>;
  close(): Promise<void>;
}

/** The gateway as its main.ts starts it (gatewayService), on the test's broker. */
async function startGateway(url: string): Promise<TestGateway> {
  const stops: Array<() => Promise<void>> = [];
  const connectionName = uniqueName('gateway');
  const registry = createMetrics();
  const config = loadConfig(withoutServerVars(gatewayConfigSpec), {
    GATEWAY_PORT: '0',
    GATEWAY_TOKENS: JSON.stringify([admin]),
    GATEWAY_TOKENS_TIMEOUT: '1000',
  });
  const running = await gatewayService.start(
    { config, logger, registry, onStop: (_name, run) => stops.push(run) },
    {
      identity: 'gateway',
      storeGroupsWrites: false,
      bus: async () => {
        const bus = await busOn(url, connectionName);
        stops.push(() => bus.close());
        return bus;
      },
      contentStore: () => Promise.reject(new Error('the gateway has no store')),
      archiveStateStore: () => Promise.reject(new Error('the gateway has no store')),
      tokenStore: () => Promise.reject(new Error('the gateway has no store')),
      auditStore: () => Promise.reject(new Error('the gateway has no store')),
    },
  );
  return {
    url: `http://127.0.0.1:${running.port}`,
    connectionName,
    registry,
    checks: () => running.checks?.() ?? {},
    async close() {
      for (const stop of stops.reverse()) await stop();
    },
  };
}

/** GET /auth/whoami with `token`: the status and the body's code (any valid token may ask). */
async function whoAmI(gateway: TestGateway, token: string) {
  const response = await fetch(`${gateway.url}/auth/whoami`, {
    headers: { authorization: `Bearer ${token}` },
  });
  const body = (await response.json()) as { code?: string; token_id?: string };
  return { status: response.status, code: body.code, tokenId: body.token_id };
}

/** Within `ms`, every gateway answers `token` with `status`. */
function expectEverywhere(gateways: TestGateway[], token: string, status: number, ms = 1000) {
  return waitFor(
    async () => {
      const answers = await Promise.all(gateways.map((gateway) => whoAmI(gateway, token)));
      return answers.every((answer) => answer.status === status);
    },
    { timeoutMs: ms, intervalMs: 20, what: `every gateway to answer the token with ${status}` },
  );
}

describe('stored tokens on two gateways (ADR 0019: changed by events, within a second)', () => {
  let broker: { url: string; remove(): Promise<void> };
  let server: Awaited<ReturnType<typeof startTokensServer>>;
  let gateways: TestGateway[] = [];

  beforeAll(async () => {
    broker = await isolatedBroker();
    server = await startTokensServer(broker.url);
    gateways = [await startGateway(broker.url), await startGateway(broker.url)];
    // Both loaded their first (empty) snapshot: an unknown token is a 401 now.
    await waitFor(() => gateways.every((gateway) => gateway.checks().tokens === true), {
      timeoutMs: 10_000,
      what: 'both gateways to load the stored tokens',
    });
  });
  afterAll(async () => {
    for (const gateway of gateways) await gateway.close();
    await server?.close();
    await broker?.remove();
  });

  it('when a token is added and announced, then it works on both gateways within 1 s; when it is revoked and announced, then both answer 401 within 1 s', async () => {
    const stored = buildStoredToken();
    for (const gateway of gateways) expect((await whoAmI(gateway, stored.secret)).status).toBe(401);

    server.tokens = [stored.held];
    await server.announce('token.create');
    await expectEverywhere(gateways, stored.secret, 200);
    expect((await whoAmI(gateways[0]!, stored.secret)).tokenId).toBe(stored.held.id);

    server.tokens = [];
    await server.announce('token.revoke');
    await expectEverywhere(gateways, stored.secret, 401);
  });

  it('when a token is added while a gateway is cut from the broker (no event reaches it), then it loads it on its reconnect, and reads later events again', async () => {
    const stored = buildStoredToken();
    const [cut, other] = [gateways[0]!, gateways[1]!];
    server.tokens = [stored.held];

    expect(await closeBrokerConnections(cut.connectionName)).toBe(1);
    await expectEverywhere([cut], stored.secret, 200, 5000);
    // The other gateway heard of nothing (its backstop is 30 s away).
    expect((await whoAmI(other, stored.secret)).status).toBe(401);

    server.tokens = [];
    await server.announce('token.revoke');
    await expectEverywhere(gateways, stored.secret, 401);
  });

  it('when many changes are announced at once, then the gateways still end on the last list', async () => {
    const tokens = Array.from({ length: 5 }, () => buildStoredToken());
    for (const [i] of tokens.entries()) {
      server.tokens = tokens.slice(0, i + 1).map((token) => token.held);
      await server.announce('token.create');
    }
    await expectEverywhere(gateways, tokens[4]!.secret, 200);
    await expectEverywhere(gateways, tokens[0]!.secret, 200);
  });
});

describe('a gateway started while no ingest worker answers', () => {
  let broker: { url: string; remove(): Promise<void> };
  let server: Awaited<ReturnType<typeof startTokensServer>> | undefined;
  let gateway: TestGateway | undefined;

  beforeAll(async () => {
    broker = await isolatedBroker();
  });
  afterAll(async () => {
    await gateway?.close();
    await server?.close();
    await broker?.remove();
  });

  it('when it starts, then it listens with the configured token working and stored ones 503 token_store_unavailable (not ready); once the server answers, the stored token works; its use is reported on stop', async () => {
    gateway = await startGateway(broker.url);
    const stored = buildStoredToken();

    expect(await whoAmI(gateway, admin.token)).toMatchObject({ status: 200, tokenId: admin.id });
    expect(await whoAmI(gateway, stored.secret)).toEqual({
      status: 503,
      code: 'token_store_unavailable',
      tokenId: undefined,
    });
    expect(gateway.checks()).toEqual({ tokens: false });

    // A first load ran out of time (GATEWAY_TOKENS_TIMEOUT 1 s): the gateway retries by itself.
    await waitFor(
      async () =>
        /^gateway_tokens_snapshot_loads_total\{result="worker_unavailable"\} [1-9]/m.test(
          await gateway!.registry.metrics(),
        ),
      { timeoutMs: 5000, what: 'a first load to fail' },
    );
    expect(await whoAmI(gateway, stored.secret)).toMatchObject({ status: 503 });

    // Holding the token from its first answer: the gateway's request may be waiting for it.
    server = await startTokensServer(broker.url, [stored.held]);
    // Its retries reach the server (backoff up to 5 s, each call waiting up to 1 s).
    await expectEverywhere([gateway], stored.secret, 200, 10_000);
    expect(gateway.checks()).toEqual({ tokens: true });
    const metrics = await gateway.registry.metrics();
    expect(metrics).toMatch(/^gateway_tokens_held 1$/m);
    expect(metrics).toMatch(/^gateway_tokens_snapshot_loads_total\{result="ok"\} [1-9]/m);
    expect(metrics).toMatch(/^gateway_tokens_snapshot_age_seconds \d/m);

    await gateway.close();
    gateway = undefined;
    expect(server.uses.map((use) => use.id)).toEqual([stored.held.id]);
  });
});
