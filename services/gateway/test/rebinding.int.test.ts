import http from 'node:http';
import { isolatedBroker } from '../../../test/services';
import { buildBatch } from '../../../test/support/content';
import { startGateway, tokens, type RunningGateway } from '../../../test/support/gateway';

/** POST /add from 127.0.0.1 with the headers a browser on another site would send. */
function postAdd(
  url: string,
  headers: Record<string, string>,
): Promise<{ status: number; body: { message?: string; errors?: Array<{ path: string }> } }> {
  const body = JSON.stringify(buildBatch('rebind-1', 0, 1));
  return new Promise((resolve, reject) => {
    const request = http.request(
      `${url}/add`,
      { method: 'POST', headers: { 'content-type': 'application/json', ...headers } },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () =>
          resolve({
            status: response.statusCode ?? 0,
            body: JSON.parse(Buffer.concat(chunks).toString()) as never,
          }),
        );
      },
    );
    request.on('error', reject);
    request.end(body);
  });
}

describe('DNS rebinding: requests without a token name a loopback Host and no foreign Origin', () => {
  let broker: { url: string; remove(): Promise<void> };
  let gateway: RunningGateway;
  let port: string;

  beforeAll(async () => {
    broker = await isolatedBroker();
    gateway = await startGateway(broker.url, { allowUnauthenticatedLoopback: true });
    port = new URL(gateway.url).port;
  });
  afterAll(async () => {
    await gateway?.close();
    await broker?.remove();
  });

  it('when a tokenless request names a foreign Host, then it is 403 naming the Host header', async () => {
    const response = await postAdd(gateway.url, {
      host: `evil.example:${port}`,
      origin: `http://evil.example:${port}`,
    });
    expect(response.status).toBe(403);
    expect(response.body.errors).toEqual([expect.objectContaining({ path: 'headers.host' })]);
    expect(response.body.message).toMatch(/loopback Host/);
  });

  it('when a tokenless request has a loopback Host but a foreign Origin, then it is 403 naming the Origin header', async () => {
    const response = await postAdd(gateway.url, {
      host: `127.0.0.1:${port}`,
      origin: 'http://evil.example',
    });
    expect(response.status).toBe(403);
    expect(response.body.errors).toEqual([expect.objectContaining({ path: 'headers.origin' })]);
  });

  it('when a tokenless request comes from a sandboxed page (Origin: null), then it is 403', async () => {
    const response = await postAdd(gateway.url, { host: `localhost:${port}`, origin: 'null' });
    expect(response.status).toBe(403);
  });

  it.each([
    ['127.0.0.1 and no Origin', { host: '127.0.0.1:3030' }],
    [
      'localhost and a loopback Origin',
      { host: 'localhost:3030', origin: 'http://localhost:3030' },
    ],
    ['[::1] and no Origin', { host: '[::1]:3030' }],
  ])('when a tokenless request names %s, then it is served', async (_, headers) => {
    const response = await postAdd(gateway.url, headers);
    expect(response.status).toBe(200);
  });

  it('when the request carries a valid token, then Host and Origin do not matter', async () => {
    const response = await postAdd(gateway.url, {
      host: `evil.example:${port}`,
      origin: 'http://evil.example',
      authorization: `Bearer ${tokens.all.token}`,
    });
    expect(response.status).toBe(200);
  });
});
