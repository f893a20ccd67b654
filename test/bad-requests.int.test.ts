import http from 'node:http';
import { validators } from '@screenfleet/contracts';
import { isolatedBroker } from './services';
import { buildBatch, buildItem } from './support/content';
import { post, startGateway, tokens, type RunningGateway } from './support/gateway';

interface RawResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** Raw HTTP, so tests can send bytes and headers fetch would refuse or fix up. */
function raw(
  url: string,
  options: { method?: string; headers?: Record<string, string>; body?: Buffer | string },
) {
  return new Promise<RawResponse>((resolve, reject) => {
    const request = http.request(
      url,
      { method: options.method ?? 'POST', headers: options.headers },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () =>
          resolve({
            status: response.statusCode ?? 0,
            headers: response.headers,
            body: Buffer.concat(chunks).toString(),
          }),
        );
      },
    );
    request.on('error', reject);
    if (options.body !== undefined) request.write(options.body);
    request.end();
  });
}

const auth = { authorization: `Bearer ${tokens.all.token}` };
const json = { ...auth, 'content-type': 'application/json' };
const item = buildItem(1);
const frames = (data: unknown) => ({
  device_name: 'bad-1',
  content: { content_type: 'frames', data },
});
const withItem = (overrides: Record<string, unknown>) => frames([{ ...item, ...overrides }]);
const deep = (depth: number) => '['.repeat(depth) + ']'.repeat(depth);

type Case = [
  name: string,
  status: number,
  request: { method?: string; path?: string; headers?: Record<string, string>; body?: unknown },
  rule?: string,
];

const cases: Case[] = [
  // body and transport
  ['not JSON', 400, { body: 'device_name=x' }, 'invalid_json'],
  [
    'a corrupt gzip body',
    400,
    { headers: { ...json, 'content-encoding': 'gzip' }, body: 'not gzip at all' },
  ],
  ['truncated JSON', 400, { body: '{"device_name": "x", "content": ' }],
  ['JSON with a trailing comma', 400, { body: '{"device_name":"x",}' }],
  ['a bare string', 400, { body: '"hello"' }, 'type'],
  ['an empty body', 400, { body: '' }],
  [
    'invalid UTF-8',
    400,
    {
      body: Buffer.concat([
        Buffer.from('{"device_name":"'),
        Buffer.from([0xc3, 0x28]),
        Buffer.from('","content":{"content_type":"frames","data":[]}}'),
      ]),
    },
  ],
  [
    'text/plain',
    415,
    { headers: { ...auth, 'content-type': 'text/plain' }, body: JSON.stringify(frames([])) },
  ],
  [
    'a form post',
    415,
    {
      headers: { ...auth, 'content-type': 'application/x-www-form-urlencoded' },
      body: 'device_name=x',
    },
  ],
  ['no content type', 415, { headers: auth, body: JSON.stringify(frames([])) }],
  [
    'an unknown content encoding',
    415,
    { headers: { ...json, 'content-encoding': 'compress' }, body: JSON.stringify(frames([])) },
  ],
  [
    'a body over 16 MiB',
    413,
    { body: JSON.stringify(withItem({ file_path: 'x'.repeat(17 * 1024 * 1024) })) },
  ],
  [
    'deep nesting in an unknown field',
    400,
    { body: `{"device_name":"x","junk":${deep(100_000)}}` },
  ],
  [
    'deep nesting in a known field',
    400,
    { body: JSON.stringify(withItem({ tags: JSON.parse(deep(500)) as unknown })) },
    'type',
  ],
  // methods and routes
  ['GET /add', 405, { method: 'GET', headers: auth }],
  ['PUT /add', 405, { method: 'PUT', body: JSON.stringify(frames([])) }],
  ['DELETE /add', 405, { method: 'DELETE', headers: auth }],
  ['an unknown route', 404, { path: '/ad', body: JSON.stringify(frames([])) }],
  // auth
  [
    'no token',
    401,
    { headers: { 'content-type': 'application/json' }, body: JSON.stringify(frames([])) },
  ],
  [
    'a wrong token',
    401,
    {
      headers: { 'content-type': 'application/json', authorization: 'Bearer nope' },
      body: JSON.stringify(frames([])),
    },
  ],
  [
    'a basic auth header',
    401,
    {
      headers: { 'content-type': 'application/json', authorization: 'Basic dXNlcjpwYXNz' },
      body: JSON.stringify(frames([])),
    },
  ],
  [
    'a token without the ingest scope',
    403,
    {
      headers: {
        'content-type': 'application/json',
        authorization: `Bearer ${tokens.operatorOnly.token}`,
      },
      body: JSON.stringify(frames([])),
    },
  ],
  [
    'a token bound to another device',
    403,
    {
      headers: {
        'content-type': 'application/json',
        authorization: `Bearer ${tokens.ingestDesk1.token}`,
      },
      body: JSON.stringify(frames([])),
    },
  ],
  // shape
  ['an array body', 400, { body: '[]' }, 'type'],
  ['null', 400, { body: 'null' }, 'type'],
  ['no device_name', 400, { body: { content: { content_type: 'frames', data: [] } } }, 'required'],
  [
    'device_name as a number',
    400,
    { body: { device_name: 5, content: { content_type: 'frames', data: [] } } },
    'type',
  ],
  [
    'device_name empty',
    400,
    { body: { device_name: '', content: { content_type: 'frames', data: [] } } },
    'minLength',
  ],
  [
    'device_name with control characters',
    400,
    { body: { device_name: 'a\u0000b', content: { content_type: 'frames', data: [] } } },
    'pattern',
  ],
  [
    'device_name too long',
    400,
    { body: { device_name: 'd'.repeat(257), content: { content_type: 'frames', data: [] } } },
    'maxLength',
  ],
  ['no content', 400, { body: { device_name: 'x' } }, 'required'],
  ['content as a string', 400, { body: { device_name: 'x', content: 'frames' } }, 'type'],
  [
    'an unknown content_type',
    400,
    { body: { device_name: 'x', content: { content_type: 'audio', data: [] } } },
    'enum',
  ],
  ['content_type missing', 400, { body: { device_name: 'x', content: { data: [] } } }, 'required'],
  [
    'data missing',
    400,
    { body: { device_name: 'x', content: { content_type: 'frames' } } },
    'required',
  ],
  ['data as {frames: [...]}', 400, { body: frames({ frames: [item] }) }, 'type'],
  ['too many items', 400, { body: buildBatch('bad-1', 0, 1001) }, 'maxItems'],
  ['an item that is a string', 400, { body: frames(['a.png']) }, 'type'],
  ['camelCase filePath', 400, { body: frames([{ filePath: 'a.png' }]) }, 'required'],
  ['file_path null', 400, { body: withItem({ file_path: null }) }, 'type'],
  ['file_path too long', 400, { body: withItem({ file_path: 'p'.repeat(4097) }) }, 'maxLength'],
  ['a date without a time', 400, { body: withItem({ timestamp: '2026-11-22' }) }, 'format'],
  [
    'a time without an offset',
    400,
    { body: withItem({ timestamp: '2026-11-22T10:00:00' }) },
    'format',
  ],
  ['an impossible date', 400, { body: withItem({ timestamp: '2026-02-30T10:00:00Z' }) }, 'format'],
  ['a timestamp in epoch seconds', 400, { body: withItem({ timestamp: 1763805600 }) }, 'type'],
  ['a timestamp in words', 400, { body: withItem({ timestamp: 'yesterday' }) }, 'format'],
  ['app_name as an object', 400, { body: withItem({ app_name: { name: 'x' } }) }, 'type'],
  ['window_name too long', 400, { body: withItem({ window_name: 'w'.repeat(1025) }) }, 'maxLength'],
  ['ocr_results as an object', 400, { body: withItem({ ocr_results: { text: 'x' } }) }, 'type'],
  [
    'an OCR result without text',
    400,
    { body: withItem({ ocr_results: [{ confidence: 0.2 }] }) },
    'required',
  ],
  [
    'OCR text over a million characters',
    400,
    { body: withItem({ ocr_results: [{ text: 't'.repeat(1_000_001) }] }) },
    'maxLength',
  ],
  [
    'confidence as a percentage',
    400,
    { body: withItem({ ocr_results: [{ text: 'x', confidence: 93 }] }) },
    'maximum',
  ],
  [
    'negative confidence',
    400,
    { body: withItem({ ocr_results: [{ text: 'x', confidence: -0.1 }] }) },
    'minimum',
  ],
  [
    'focused as a string',
    400,
    { body: withItem({ ocr_results: [{ text: 'x', focused: 'yes' }] }) },
    'type',
  ],
  ['tags as a string', 400, { body: withItem({ tags: 'work' }) }, 'type'],
  ['an empty tag', 400, { body: withItem({ tags: [''] }) }, 'minLength'],
  [
    'too many tags',
    400,
    { body: withItem({ tags: Array.from({ length: 101 }, (_, i) => `t${i}`) }) },
    'maxItems',
  ],
  [
    'a transcription without text',
    400,
    { body: { device_name: 'x', content: { content_type: 'transcription', data: {} } } },
    'required',
  ],
  [
    'a transcription as a list',
    400,
    { body: { device_name: 'x', content: { content_type: 'transcription', data: [] } } },
    'type',
  ],
];

describe('POST /add refuses bad requests clearly', () => {
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

  // Every row gets all four values: with fewer, jest would pass its done callback as `rule`.
  it.each(
    cases.map(([name, status, request, rule]) => [name, status, request, rule ?? ''] as const),
  )(
    'when the request has %s, then it is answered %d with a JSON error body',
    async (_, status, request, rule) => {
      const body =
        request.body === undefined
          ? undefined
          : typeof request.body === 'string' || Buffer.isBuffer(request.body)
            ? request.body
            : JSON.stringify(request.body);
      const response = await raw(`${gateway.url}${request.path ?? '/add'}`, {
        method: request.method,
        headers: request.headers ?? json,
        body,
      });

      expect(response.status).toBe(status);
      expect(response.headers['content-type']).toMatch(/^application\/json/);
      const parsed = JSON.parse(response.body) as unknown;
      expect(validators.errorBody.check(parsed)).toEqual([]);
      const errorBody = parsed as {
        message: string;
        errors: Array<{ rule: string; path: string }>;
      };
      expect(errorBody.message.length).toBeGreaterThan(5);
      if (rule)
        expect(errorBody.errors.map((e) => e.rule).concat(errorBody.message)).toContain(
          rule === 'invalid_json' ? 'the body is not valid JSON' : rule,
        );
    },
  );

  it('when a field is missing, then the message names it', async () => {
    const response = await post(`${gateway.url}/add`, frames([{ filePath: 'a.png' }]));
    expect(response.body).toMatchObject({
      success: false,
      errors: [
        {
          path: 'content.data[0].file_path',
          rule: 'required',
          detail: 'content.data[0].file_path is required',
        },
      ],
    });
  });

  it('when a request is refused for its method, then Allow names POST', async () => {
    const response = await raw(`${gateway.url}/add`, { method: 'GET', headers: auth });
    expect(response.headers.allow).toBe('POST');
  });

  it('when a __proto__ key is sent, then nothing is polluted and the batch is accepted without it', async () => {
    const response = await raw(`${gateway.url}/add`, {
      headers: json,
      body: '{"device_name":"bad-1","__proto__":{"isAdmin":true},"content":{"content_type":"frames","data":[{"file_path":"a","constructor":{"prototype":{"x":1}}}]}}',
    });
    expect(response.status).toBe(200);
    expect(({} as Record<string, unknown>).isAdmin).toBeUndefined();
    expect(({} as Record<string, unknown>).x).toBeUndefined();
  });

  it('when all of that was sent, then the gateway still accepts a good batch', async () => {
    const response = await post(`${gateway.url}/add`, buildBatch('bad-1', 0, 3));
    expect(response).toMatchObject({ status: 200, body: { success: true } });
  });
});
