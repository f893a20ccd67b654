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

  it('when a million OCR results are each invalid, then 50 errors are reported', async () => {
    const ocr = `[${Array.from({ length: 1000 }, () => '{"text":"x","confidence":2}').join(',')}]`;
    const item = `{"file_path":"a.png","ocr_results":${ocr}}`;
    const body = `{"device_name":"big-1","content":{"content_type":"frames","data":[${Array.from({ length: 500 }, () => item).join(',')}]}}`;
    const response = await post(`${gateway.url}/add`, body);

    expect(response.status).toBe(400);
    expect(response.body.errors).toHaveLength(50);
  });
});
