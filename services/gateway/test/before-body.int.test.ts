import net from 'node:net';
import { isolatedBroker } from '../../../test/services';
import { startGateway, tokens, type RunningGateway } from '../../../test/support/gateway';

interface RawAnswer {
  status: number;
  headers: string;
  body: string;
}

/**
 * Sends a request's headers announcing `Content-Length: 16000000` and only the first bytes of
 * its body, then waits for an answer while the rest is never sent: an answer can only come from
 * a gateway that did not wait for (let alone parse) the body.
 */
function partialRequest(
  url: string,
  method: string,
  path: string,
  headers: string[],
  contentType = 'application/json',
) {
  const { hostname, port } = new URL(url);
  return new Promise<RawAnswer>((resolve, reject) => {
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
      const length = /content-length: (\d+)/i.exec(received)?.[1];
      if (end < 0 || length === undefined) return;
      const body = received.slice(end + 4);
      if (Buffer.byteLength(body) < Number(length)) return;
      clearTimeout(timer);
      socket.destroy();
      resolve({
        status: Number(received.slice(9, 12)),
        headers: received.slice(0, end),
        body,
      });
    });
    socket.write(
      [
        `${method} ${path} HTTP/1.1`,
        `Host: ${hostname}:${port}`,
        `Content-Type: ${contentType}`,
        'Content-Length: 16000000',
        ...headers,
        '',
        '{"device_name":"x","content":{"content_type":"frames","data":[0,0,0',
      ].join('\r\n'),
    );
  });
}

describe('requests are authenticated and routed before their body is read', () => {
  let broker: { url: string; remove(): Promise<void> };
  let gateway: RunningGateway;

  beforeAll(async () => {
    broker = await isolatedBroker();
    gateway = await startGateway(broker.url);
  });
  afterAll(async () => {
    await gateway?.close();
    await broker?.remove();
  });

  it.each([
    ['without a token', []],
    ['with a wrong token', ['Authorization: Bearer not-a-valid-token-at-all']],
  ])(
    'when a 16 MB POST /add comes %s and its body is still being sent, then it is answered 401 at once',
    async (_, headers) => {
      const answer = await partialRequest(gateway.url, 'POST', '/add', headers);
      expect(answer.status).toBe(401);
      expect(JSON.parse(answer.body)).toEqual(expect.objectContaining({ success: false }));
    },
  );

  it('when a 16 MB key press comes without a token, body unfinished, then it is answered 401 at once', async () => {
    const answer = await partialRequest(
      gateway.url,
      'POST',
      '/experimental/operator/press-key-by-index',
      [],
    );
    expect(answer.status).toBe(401);
  });

  it('when a 16 MB POST goes to an unknown path, body unfinished, then it is answered 404 at once', async () => {
    const answer = await partialRequest(gateway.url, 'POST', '/no-such-route', [
      `Authorization: Bearer ${tokens.all.token}`,
    ]);
    expect(answer.status).toBe(404);
  });

  it('when the token lacks the scope, body unfinished, then it is answered 403 at once', async () => {
    const answer = await partialRequest(gateway.url, 'POST', '/add', [
      `Authorization: Bearer ${tokens.operatorOnly.token}`,
    ]);
    expect(answer.status).toBe(403);
  });

  it.each([
    '/add',
    '/archive/restore',
    '/archive/configure',
    '/experimental/operator/press-key-by-index',
  ])(
    'when a 16 MB POST %s says charset=utf-7 and its body is still being sent, then it is answered 415 at once',
    async (path) => {
      const answer = await partialRequest(
        gateway.url,
        'POST',
        path,
        [`Authorization: Bearer ${tokens.all.token}`],
        'application/json; charset=utf-7',
      );
      expect(answer.status).toBe(415);
      expect(JSON.parse(answer.body)).toEqual(
        expect.objectContaining({
          errors: [{ path: '', rule: 'charset', detail: 'got application/json; charset=utf-7' }],
        }),
      );
    },
  );

  it.each([[{}], [{ authorization: `Bearer ${tokens.all.token}` }]])(
    'when a GET goes to an unknown path (%o), then it is a 404 with a JSON error body, not a 415',
    async (headers) => {
      const response = await fetch(`${gateway.url}/no-such-route`, { headers });
      expect(response.status).toBe(404);
      expect(response.headers.get('content-type')).toMatch(/^application\/json/);
      expect(await response.json()).toEqual({
        success: false,
        message: 'no route GET /no-such-route',
        errors: [],
      });
    },
  );
});
