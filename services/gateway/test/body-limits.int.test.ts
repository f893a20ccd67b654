import { isolatedBroker } from '../../../test/services';
import { post, startGateway, type RunningGateway } from '../../../test/support/gateway';

describe('bodies whose size the limits refuse', () => {
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

  it('when content.data holds 8 million zeros (16 MB), then the answer is one 400: content.data maxItems', async () => {
    const body = `{"device_name":"big-1","content":{"content_type":"frames","data":[${'0,'.repeat(7_999_999)}0]}}`;
    const response = await post(`${gateway.url}/add`, body);

    expect(response.status).toBe(400);
    expect(response.body.errors).toEqual([
      {
        path: 'content.data',
        rule: 'maxItems',
        detail: 'content.data must NOT have more than 1000 items',
      },
    ]);
  });

  it('when an unknown field holds a huge array, then it is refused the same way, by name', async () => {
    const body = `{"device_name":"big-1","junk":[${'0,'.repeat(100_000)}0],"content":{"content_type":"frames","data":[]}}`;
    const response = await post(`${gateway.url}/add`, body);

    expect(response.status).toBe(400);
    expect(response.body.errors).toEqual([
      expect.objectContaining({ path: 'junk', rule: 'maxItems' }),
    ]);
  });

  it('when 7 million brackets nest in a field (14 MB), then it is a 400 maxDepth without parsing them', async () => {
    const d = 7_000_000;
    const body = `{"device_name":"big-1","junk":${'['.repeat(d)}${']'.repeat(d)},"content":{"content_type":"frames","data":[]}}`;
    const response = await post(`${gateway.url}/add`, body);

    expect(response.status).toBe(400);
    expect(response.body.errors).toEqual([expect.objectContaining({ rule: 'maxDepth' })]);
  });

  it('when a million OCR results are each invalid, then 50 errors are reported', async () => {
    const ocr = `[${Array.from({ length: 1000 }, () => '{"text":"x","confidence":2}').join(',')}]`;
    const item = `{"file_path":"a.png","ocr_results":${ocr}}`;
    const body = `{"device_name":"big-1","content":{"content_type":"frames","data":[${Array.from({ length: 500 }, () => item).join(',')}]}}`;
    const response = await post(`${gateway.url}/add`, body);

    expect(response.status).toBe(400);
    expect(response.body.errors).toHaveLength(50);
  });

  it.each([
    ['utf-7', 'application/json; charset=utf-7'],
    ['UTF-16LE', 'application/json; charset=UTF-16LE'],
    ['utf-32 (quoted)', 'application/json;charset="utf-32"'],
    ['latin1', 'application/json; charset=iso-8859-1'],
  ])(
    'when a body is sent as %s (5 million UTF-7 brackets would pass the size scan), then 415 names the charset and nothing is parsed',
    async (_, contentType) => {
      // In UTF-7 "[" is "+AFs-": the pre-parse scan of the raw bytes sees no array at all.
      const body = `{"device_name":"big-1","junk":${'+AFs-'.repeat(1_000_000)}${'+AF0-'.repeat(1_000_000)},"content":{"content_type":"frames","data":[]}}`;
      const response = await post(`${gateway.url}/add`, body, undefined, {
        'content-type': contentType,
      });

      expect(response.status).toBe(415);
      expect(response.body).toEqual({
        success: false,
        message: 'JSON bodies must be UTF-8: charset must be utf-8 or absent',
        errors: [
          {
            path: '',
            rule: 'charset',
            detail: `got ${contentType}`,
          },
        ],
      });
    },
  );

  it.each(['application/json; charset=utf-8', 'application/json; charset="UTF-8"'])(
    'when the Content-Type is %s, then the body is read as usual',
    async (contentType) => {
      const response = await post(
        `${gateway.url}/add`,
        { device_name: 'utf8-1', content: { content_type: 'frames', data: [] } },
        undefined,
        { 'content-type': contentType },
      );

      expect(response.status).toBe(200);
    },
  );

  it.each([
    [
      '/add',
      (device_name: string) => ({ device_name, content: { content_type: 'frames', data: [] } }),
    ],
    [
      '/experimental/operator/press-key-by-index',
      (device_name: string) => ({ element_index: 0, key: 'a', device_name }),
    ],
    [
      '/experimental/operator/list-interactable-elements',
      (device_name: string) => ({ app_name: 'x', device_name }),
    ],
  ])(
    'when %s names a device too long for a routing key, then it is a 400 naming device_name, not a 503',
    async (route, build) => {
      for (const [name, rule] of [
        ['a'.repeat(256), 'maxLength'],
        ['é'.repeat(101), 'maxBytes'],
        ['😀'.repeat(51), 'maxBytes'],
      ]) {
        const response = await post(`${gateway.url}${route}`, build(name as string));
        expect(response.status).toBe(400);
        expect(response.headers.get('retry-after')).toBeNull();
        expect(response.body.errors).toEqual([
          expect.objectContaining({ path: 'device_name', rule }),
        ]);
      }
    },
  );
});
