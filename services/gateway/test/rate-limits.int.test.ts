import net from 'node:net';
import { isolatedBroker } from '../../../test/services';
import { buildBatch } from '../../../test/support/content';
import {
  get,
  post,
  startGateway,
  tokens,
  type RunningGateway,
} from '../../../test/support/gateway';
import { startSystem, type RunningSystem } from '../../../test/support/system';

/** Small limits, so a test reaches them in a few requests (the defaults are far above). */
const rateLimits = {
  ingest: { limit: 5, windowMs: 60_000 },
  unauthenticated: { limit: 3, windowMs: 60_000 },
};

/** The 429's promises: the JSON error body, Retry-After and the draft-08 fields at one moment. */
function expectRateLimited(
  answer: { status: number; headers: Headers; body: Record<string, unknown> },
  policy: string,
  limit: number,
) {
  expect(answer.status).toBe(429);
  expect(answer.body).toMatchObject({ success: false, errors: [], code: 'rate_limited' });
  expect(answer.body.message).toMatch(
    new RegExp(`too many ${policy} requests: at most ${limit} per 60 s`),
  );
  const retryAfter = Number(answer.headers.get('retry-after'));
  expect(retryAfter).toBeGreaterThanOrEqual(1);
  expect(retryAfter).toBeLessThanOrEqual(60 / limit);
  expect(answer.headers.get('ratelimit-policy')).toBe(`"${policy}";q=${limit};w=60`);
  expect(answer.headers.get('ratelimit')).toBe(`"${policy}";r=0;t=${retryAfter}`);
}

async function postWithBadToken(url: string) {
  return post(`${url}/add`, buildBatch('desk-1', 0, 1), 'not-a-valid-token-at-all');
}

/**
 * A POST /add announcing a 16 MB body of which only the first bytes are sent: an answer can only
 * come from a gateway that did not wait for the body (as in before-body.int.test.ts).
 */
function partialAdd(url: string, token: string) {
  const { hostname, port } = new URL(url);
  return new Promise<{ status: number; headers: string }>((resolve, reject) => {
    const socket = net.connect(Number(port), hostname);
    let received = '';
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no answer within 3 s; got so far: ${received}`));
    }, 3000);
    socket.on('error', reject);
    socket.on('data', (chunk: Buffer) => {
      received += chunk.toString();
      const end = received.indexOf('\r\n\r\n');
      if (end < 0) return;
      clearTimeout(timer);
      socket.destroy();
      resolve({ status: Number(received.slice(9, 12)), headers: received.slice(0, end) });
    });
    socket.write(
      [
        'POST /add HTTP/1.1',
        `Host: ${hostname}:${port}`,
        'Content-Type: application/json',
        'Content-Length: 16000000',
        `Authorization: Bearer ${token}`,
        '',
        '{"device_name":"desk-1","content":{"content_type":"frames","data":[0,0,0',
      ].join('\r\n'),
    );
  });
}

describe('per-token rate limits on real gateways (distributed: limits are per gateway)', () => {
  let broker: { url: string; remove(): Promise<void> };
  let first: RunningGateway;
  let second: RunningGateway;

  beforeAll(async () => {
    broker = await isolatedBroker();
    first = await startGateway(broker.url, { rateLimits });
    second = await startGateway(broker.url, { rateLimits });
  });
  afterAll(async () => {
    await first?.close();
    await second?.close();
    await broker?.remove();
  });

  it('when a token sends more than its ingest limit, then it gets 200s with the RateLimit fields, then a 429 before its body is read; another token and another gateway still serve it', async () => {
    const url = first.url;
    const remaining: string[] = [];
    for (let i = 0; i < 5; i++) {
      const answer = await post(`${url}/add`, buildBatch('desk-1', i, 1), tokens.ingestDesk1.token);
      expect(answer.status).toBe(200);
      expect(answer.headers.get('ratelimit-policy')).toBe('"ingest";q=5;w=60');
      remaining.push(answer.headers.get('ratelimit')?.split(';')[1] ?? '');
    }
    expect(remaining).toEqual(['r=4', 'r=3', 'r=2', 'r=1', 'r=0']);

    expectRateLimited(
      await post(`${url}/add`, buildBatch('desk-1', 9, 1), tokens.ingestDesk1.token),
      'ingest',
      5,
    );

    // Answered while 16 MB are still announced: counted and refused before the body.
    const partial = await partialAdd(url, tokens.ingestDesk1.token);
    expect(partial.status).toBe(429);
    expect(partial.headers).toMatch(/^retry-after: \d+$/im);
    expect(partial.headers).toMatch(/^ratelimit: "ingest";r=0;t=\d+$/im);

    // Another token has its own quota.
    const other = await post(`${url}/add`, buildBatch('desk-2', 0, 1), tokens.all.token);
    expect(other.status).toBe(200);
    expect(other.headers.get('ratelimit')).toMatch(/^"ingest";r=4;t=\d+$/);

    // Another gateway counts on its own (ADR 0019): the same token gets its whole limit there.
    for (let i = 0; i < 5; i++) {
      const answer = await post(
        `${second.url}/add`,
        buildBatch('desk-1', 20 + i, 1),
        tokens.ingestDesk1.token,
      );
      expect(answer.status).toBe(200);
    }
    expectRateLimited(
      await post(`${second.url}/add`, buildBatch('desk-1', 30, 1), tokens.ingestDesk1.token),
      'ingest',
      5,
    );
  });

  it('when one address sends bad tokens past the unauthenticated limit, then it gets 401s, then 429s, while a valid token from the same address is served', async () => {
    const url = second.url;
    for (let i = 0; i < 3; i++) {
      const answer = await postWithBadToken(url);
      expect(answer.status).toBe(401);
      expect(answer.headers.get('ratelimit-policy')).toBe('"unauthenticated";q=3;w=60');
    }
    expectRateLimited(await postWithBadToken(url), 'unauthenticated', 3);
    // No token at all is the same class and key.
    const without = await get(`${url}/auth/whoami`, null);
    expect(without.status).toBe(429);

    const valid = await get(`${url}/auth/whoami`, tokens.searchDesk1.token);
    expect(valid.status).toBe(200);
    // A class without a rule (admin here) is not limited and says nothing about limits.
    expect(valid.headers.get('ratelimit')).toBeNull();

    // GET /health is never counted (monitors poll it; it costs one summary read a second).
    const health = await get(`${url}/health`, 'not-a-valid-token-at-all');
    expect(health.status).not.toBe(429);
    expect(health.headers.get('ratelimit')).toBeNull();
  });
});

describe('per-token rate limits in the embedded mode', () => {
  let system: RunningSystem;

  beforeAll(async () => {
    system = await startSystem('embedded', { env: { GATEWAY_RATE_LIMIT_INGEST: '2/1m' } });
  });
  afterAll(async () => {
    await system?.stop();
  });

  it('when a token sends more than GATEWAY_RATE_LIMIT_INGEST, then the third POST /add is a 429 with Retry-After and the RateLimit fields', async () => {
    for (let i = 0; i < 2; i++) {
      const answer = await post(`${system.url}/add`, buildBatch('desk-1', i, 1));
      expect(answer.status).toBe(200);
      expect(answer.headers.get('ratelimit-policy')).toBe('"ingest";q=2;w=60');
    }
    expectRateLimited(await post(`${system.url}/add`, buildBatch('desk-1', 5, 1)), 'ingest', 2);
  });
});
