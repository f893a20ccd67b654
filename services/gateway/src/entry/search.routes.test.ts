import http, { type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  createEnvelope,
  topology,
  type Envelope,
  type SearchAnswer,
  type SearchRequest,
} from '@screenfleet/contracts';
import { createMemoryBus, type Bus } from '@screenfleet/bus';
import { createLogger, createMetrics } from '@screenfleet/runtime';
import { createGatewayApp } from '../app';
import { createTokenRegistry } from '../auth/tokens';
import { createGatewayMetrics } from '../index';
import { createOperatorPresence } from '../domain/operator-presence';
import { toHttpFailure } from './http-errors';
import { devicesToSearch } from './search.routes';

// The whole app on a loopback port with a bus whose search.rpc answers at once: what reaches the
// worker, and what the client gets, for each kind of request. The real bus and workers are in
// test/search.int.test.ts.
const tokens = {
  all: { id: 'all', token: 'search-token-all-0001', scopes: ['search' as const] },
  desk1: {
    id: 'desk1',
    token: 'search-token-desk1-001',
    scopes: ['search' as const],
    devices: ['desk-1', 'desk-2'],
  },
  nowhere: {
    id: 'nowhere',
    token: 'search-token-none-0001',
    scopes: ['search' as const],
    devices: [],
  },
  ingest: { id: 'ingest', token: 'search-token-ingest-01', scopes: ['ingest' as const] },
};

const answer: SearchAnswer = { data: [], pagination: { limit: 20, offset: 0, total: 0 } };

/** GET with these headers over node:http (fetch would not send a foreign Host). */
function get(
  url: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    http
      .get(url, { headers }, (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () =>
          resolve({
            status: response.statusCode ?? 0,
            headers: response.headers,
            body: JSON.parse(Buffer.concat(chunks).toString()) as Record<string, unknown>,
          }),
        );
      })
      .on('error', reject);
  });
}

describe('GET /search in the gateway', () => {
  let server: Server;
  let base: string;
  const relayed: SearchRequest[] = [];
  const bearer = (token: { token: string }) => ({ authorization: `Bearer ${token.token}` });

  beforeAll(async () => {
    const bus = {
      call: (_queue: string, request: Envelope) => {
        relayed.push(request.payload as SearchRequest);
        return Promise.resolve(createEnvelope('search.reply', { outcome: 'ok', answer }));
      },
    } as unknown as Bus;
    const logger = createLogger({ service: 'test', level: 'silent' });
    const app = createGatewayApp(
      {
        bus,
        auth: {
          tokens: createTokenRegistry(Object.values(tokens)),
          allowUnauthenticatedLoopback: true,
        },
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
  beforeEach(() => {
    relayed.length = 0;
  });

  it('when a search is asked, then the resolved request goes to the workers and their answer comes back, never cached', async () => {
    const before = Date.now();
    const response = await get(
      `${base}/search?q=report&content_type=audio+ocr&start_time=1h+ago&limit=5000`,
      bearer(tokens.all),
    );
    expect(response.status).toBe(200);
    expect(response.body).toEqual(answer);
    expect(response.headers['cache-control']).toBe('no-store');
    expect(relayed).toEqual([
      {
        q: 'report',
        content_types: ['frames', 'transcription'],
        from: expect.any(String) as string,
        order: 'newest',
        limit: 1000,
        offset: 0,
        budget_ms: expect.any(Number) as number,
      },
    ]);
    const from = Date.parse(relayed[0]?.from ?? '');
    expect(from).toBeGreaterThanOrEqual(before - 3_600_000);
    expect(from).toBeLessThanOrEqual(Date.now() - 3_600_000);
  });

  it('when a parameter is bad, then 400 in the error body naming it and its rule, nothing relayed', async () => {
    const response = await get(`${base}/search?limit=ten&start_time=yesterday`, bearer(tokens.all));
    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({
      success: false,
      code: 'validation_failed',
      errors: [
        { path: 'query.limit', rule: 'type' },
        { path: 'query.start_time', rule: 'format' },
      ],
    });
    expect(relayed).toEqual([]);
  });

  it("when a device-bound token names no device, then only its devices are searched; another device's is 403", async () => {
    expect((await get(`${base}/search`, bearer(tokens.desk1))).status).toBe(200);
    expect(relayed[0]?.devices).toEqual(['desk-1', 'desk-2']);
    const other = await get(`${base}/search?device_name=desk-9`, bearer(tokens.desk1));
    expect(other.status).toBe(403);
    expect(other.body.message).toBe('token desk1 is not allowed for device "desk-9"');
    expect(relayed).toHaveLength(1);
  });

  it('when only legacy types we never store are asked for, or the token has no device, then an empty page without asking a worker', async () => {
    for (const [query, token] of [
      ['content_type=ui&limit=7&offset=3', tokens.all],
      ['content_type=input', tokens.all],
      ['', tokens.nowhere],
    ] as const) {
      const response = await get(`${base}/search?${query}`, bearer(token));
      expect(response.status).toBe(200);
      expect(response.body.data).toEqual([]);
      expect(response.body.pagination).toMatchObject({ total: 0 });
    }
    expect(relayed).toEqual([]);
  });

  it('when the token lacks the search scope, then 403; without a token from loopback, a loopback Host is served and a foreign one refused', async () => {
    const port = new URL(base).port;
    const scope = await get(`${base}/search`, bearer(tokens.ingest));
    expect(scope.status).toBe(403);
    expect(scope.body.message).toBe('token ingest lacks the search scope');
    expect((await get(`${base}/search`, { host: `localhost:${port}` })).status).toBe(200);
    const rebound = await get(`${base}/search`, { host: `attacker.example:${port}` });
    expect(rebound.status).toBe(403);
    expect(rebound.body.errors).toEqual([expect.objectContaining({ path: 'headers.host' })]);
  });

  it('when /search is posted to, then 405 naming GET', async () => {
    const response = await fetch(`${base}/search`, { method: 'POST', headers: bearer(tokens.all) });
    expect(response.status).toBe(405);
    expect(response.headers.get('allow')).toBe('GET');
  });
});

describe('devicesToSearch', () => {
  const bound = { id: 'desk', scopes: ['search' as const], devices: ['desk-1', 'desk-2'] };
  const unbound = { id: 'all', scopes: ['search' as const] };

  it("when a device-bound token names none, then the search reads all of the token's devices", () => {
    expect(devicesToSearch(bound, undefined)).toEqual(['desk-1', 'desk-2']);
  });

  it('when a device-bound token names one of its devices, then only that one', () => {
    expect(devicesToSearch(bound, 'desk-2')).toEqual(['desk-2']);
  });

  it('when a device-bound token names another device, then 403 forbidden_device (as on /add)', () => {
    const failure = toHttpFailure(captured(() => devicesToSearch(bound, 'desk-9')));
    expect(failure).toMatchObject({ status: 403, reason: 'forbidden_device' });
  });

  it('when an unbound token names a device, then that one; names none, then every device', () => {
    expect(devicesToSearch(unbound, 'desk-9')).toEqual(['desk-9']);
    expect(devicesToSearch(unbound, undefined)).toBeUndefined();
  });
});

function captured(run: () => unknown): unknown {
  try {
    run();
  } catch (error) {
    return error;
  }
  throw new Error('expected a throw');
}

// Embedded mode's bus, with nothing serving search.rpc: the end-to-end suite cannot stop the
// in-process ingest worker, so the embedded path to the 503 is shown here.
describe('GET /search over the in-process bus with no ingest worker serving', () => {
  it('when no worker takes the search, then 503 after the timeout, with a reason and Retry-After', async () => {
    const bus = createMemoryBus({ topology });
    const logger = createLogger({ service: 'test', level: 'silent' });
    const app = createGatewayApp(
      {
        bus,
        auth: {
          tokens: createTokenRegistry([tokens.all]),
          allowUnauthenticatedLoopback: false,
        },
        metrics: createGatewayMetrics(createMetrics()),
        logger,
        search: { timeoutMs: 300 },
      },
      createOperatorPresence({ bus, logger }),
    );
    const server = await new Promise<Server>((resolve) => {
      const listening = app.listen(0, '127.0.0.1', () => resolve(listening));
    });
    try {
      const { port } = server.address() as AddressInfo;
      const started = Date.now();
      const response = await get(`http://127.0.0.1:${port}/search?q=x`, {
        authorization: `Bearer ${tokens.all.token}`,
      });
      expect(response.status).toBe(503);
      expect(response.headers['retry-after']).toBe('5');
      expect(response.body.message).toBe(
        'no answer from an ingest worker within 300 ms (is one running?)',
      );
      expect(Date.now() - started).toBeGreaterThanOrEqual(290);
    } finally {
      await new Promise((resolve) => server.close(resolve));
      await bus.close();
    }
  });
});
