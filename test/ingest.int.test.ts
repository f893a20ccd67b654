import amqp from 'amqplib';
import { MongoClient, type Collection } from 'mongodb';
import { createEnvelope, exchangeNames } from '@screenfleet/contracts';
import { databaseName, isolatedBroker, mongoUrl } from './services';
import { buildBatch, buildItem } from './support/content';
import { waitForCount as storedCount } from './support/store';
import { post, startGateway, tokens, type RunningGateway } from './support/gateway';
import { startService, type ServiceProcess } from './support/processes';

// POST /add -> RabbitMQ -> ingest worker -> the MongoDB-protocol server, all real.
describe('ingest end to end', () => {
  let broker: { url: string; remove(): Promise<void> };
  let gateway: RunningGateway;
  let worker: ServiceProcess;
  let client: MongoClient;
  let items: Collection<Record<string, unknown>>;
  let workerOpsPort: number;
  const database = databaseName('ingest');

  beforeAll(async () => {
    broker = await isolatedBroker();
    gateway = await startGateway(broker.url);
    worker = startService('ingest-worker', {
      RABBITMQ_URL: broker.url,
      MONGODB_URL: mongoUrl(),
      MONGODB_DATABASE: database,
      INGEST_OPS_PORT: '0',
    });
    await worker.waitForLog(/consuming content batches/);
    workerOpsPort = Number((await worker.waitForLog(/ops server listening/)).port);
    client = await MongoClient.connect(mongoUrl());
    items = client.db(database).collection('content_items');
  });

  afterAll(async () => {
    await worker?.stop();
    await gateway?.close();
    await client?.db(database).dropDatabase();
    await client?.close();
    await broker?.remove();
  });

  const waitForCount = (filter: Record<string, unknown>, expected: number) =>
    storedCount(items, filter, expected);

  it('when one item is posted, then it is stored with every field intact and the timestamp as a UTC date', async () => {
    const ocr = {
      text: 'hello world',
      confidence: 0.75,
      text_json: '[{"t":1}]',
      ocr_engine: 'tesseract',
      focused: true,
    };
    const item = buildItem(1, {
      timestamp: '2026-11-22T18:00:01.5+08:00',
      ocr_results: [ocr],
      tags: ['alpha', 'beta'],
    });

    const response = await post(`${gateway.url}/add`, {
      device_name: 'e2e-one',
      content: { content_type: 'frames', data: [item] },
    });

    expect(response).toMatchObject({
      status: 200,
      body: { success: true, message: 'accepted 1 item for device e2e-one' },
    });
    expect(await waitForCount({ device_name: 'e2e-one' }, 1)).toBe(1);
    const stored = await items.findOne({ device_name: 'e2e-one' });
    expect(stored).toMatchObject({
      device_name: 'e2e-one',
      content_type: 'frames',
      file_path: item.file_path,
      timestamp: new Date('2026-11-22T10:00:01.500Z'),
      timestamp_source: 'client',
      app_name: item.app_name,
      window_name: item.window_name,
      ocr_results: [ocr],
      tags: ['alpha', 'beta'],
      transcription: null,
    });
    expect(stored?.received_at).toBeInstanceOf(Date);
  });

  it('when a batch comes with an X-Request-Id, then the worker logs its write under that id (one grep follows it)', async () => {
    const requestId = `trace-${Date.now()}`;

    const response = await fetch(`${gateway.url}/add`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        authorization: `Bearer ${tokens.all.token}`,
        'x-request-id': requestId,
      },
      body: JSON.stringify(buildBatch('e2e-traced', 500, 2)),
    });

    expect(response.status).toBe(200);
    expect(response.headers.get('x-request-id')).toBe(requestId);
    const line = await worker.waitForLog(
      /content batch written/,
      20_000,
      (logged) => logged.requestId === requestId,
    );
    expect(line).toMatchObject({ requestId, items: 2 });
  });

  it('when an empty batch is posted, then it is accepted and nothing is stored', async () => {
    const response = await post(`${gateway.url}/add`, {
      device_name: 'e2e-empty',
      content: { content_type: 'frames', data: [] },
    });

    expect(response).toMatchObject({
      status: 200,
      body: { success: true, message: 'accepted 0 items for device e2e-empty' },
    });
    // A later batch of the same device proves the empty one went through the queue before it.
    await post(`${gateway.url}/add`, buildBatch('e2e-empty', 5000, 1));
    expect(await waitForCount({ device_name: 'e2e-empty' }, 1)).toBe(1);
  });

  it('when a large batch is posted twice, then every item is stored exactly once', async () => {
    const batch = buildBatch('e2e-large', 10_000, 1000);

    const first = await post(`${gateway.url}/add`, batch);
    const again = await post(`${gateway.url}/add`, batch);

    expect([first.status, again.status]).toEqual([200, 200]);
    expect(await waitForCount({ device_name: 'e2e-large' }, 1000)).toBe(1000);
    // The re-sent copy is processed after the first; one more batch behind both marks the end.
    await post(`${gateway.url}/add`, buildBatch('e2e-large-end', 0, 1));
    await waitForCount({ device_name: 'e2e-large-end' }, 1);
    expect(await items.countDocuments({ device_name: 'e2e-large' })).toBe(1000);
    const times = await items
      .find({ device_name: 'e2e-large' })
      .sort({ timestamp: 1 })
      .limit(2)
      .toArray();
    expect(times.map((d) => d.timestamp)).toEqual([
      new Date(buildItem(10_000).timestamp),
      new Date(buildItem(10_001).timestamp),
    ]);
  });

  it('when items carry no timestamp, then they get the receipt time and a client retry does not duplicate them', async () => {
    const before = Date.now();
    const batch = {
      device_name: 'e2e-untimed',
      content: {
        content_type: 'frames',
        data: [{ file_path: 'a.png', timestamp: null }, { file_path: 'b.png' }],
      },
    };

    await post(`${gateway.url}/add`, batch);
    await post(`${gateway.url}/add`, batch);
    await post(`${gateway.url}/add`, buildBatch('e2e-untimed-end', 0, 1));
    await waitForCount({ device_name: 'e2e-untimed-end' }, 1);

    const stored = await items.find({ device_name: 'e2e-untimed' }).toArray();
    expect(stored).toHaveLength(2);
    for (const doc of stored) {
      expect(doc.timestamp_source).toBe('received');
      expect((doc.timestamp as Date).getTime()).toBeGreaterThanOrEqual(before - 1000);
    }
  });

  it('when two items differ only past the millisecond of their timestamps, then both are stored', async () => {
    const response = await post(`${gateway.url}/add`, {
      device_name: 'e2e-sub-ms',
      content: {
        content_type: 'frames',
        data: [
          { file_path: 'same.png', timestamp: '2026-11-22T10:00:00.1234Z' },
          { file_path: 'same.png', timestamp: '2026-11-22T10:00:00.1235Z' },
        ],
      },
    });

    expect(response.body).toMatchObject({ message: 'accepted 2 items for device e2e-sub-ms' });
    expect(await waitForCount({ device_name: 'e2e-sub-ms' }, 2)).toBe(2);
    const ids = (await items.find({ device_name: 'e2e-sub-ms' }).toArray()).map((d) => d._id);
    expect(ids).toEqual([expect.stringMatching(/^2t-/), expect.stringMatching(/^2t-/)]);
  });

  it('when a transcription is posted, then it is stored as one document', async () => {
    const response = await post(`${gateway.url}/add`, {
      device_name: 'e2e-mic',
      content: {
        content_type: 'transcription',
        data: { transcription: 'ship it', transcription_engine: 'whisper-large' },
      },
    });
    expect(response.status).toBe(200);
    expect(await waitForCount({ device_name: 'e2e-mic' }, 1)).toBe(1);
    expect(await items.findOne({ device_name: 'e2e-mic' })).toMatchObject({
      content_type: 'transcription',
      transcription: { text: 'ship it', engine: 'whisper-large' },
    });
  });

  it('when a message can never be written, then it is dead-lettered and later batches still flow', async () => {
    const connection = await amqp.connect(broker.url);
    const channel = await connection.createConfirmChannel();
    const poison = createEnvelope('content.batch', { received_at: 'not a time', request: {} });
    channel.publish(exchangeNames.capture, 'content.frames', Buffer.from(JSON.stringify(poison)), {
      persistent: true,
    });
    await channel.waitForConfirms();
    await connection.close();

    await post(`${gateway.url}/add`, buildBatch('e2e-after-poison', 0, 2));
    expect(await waitForCount({ device_name: 'e2e-after-poison' }, 2)).toBe(2);
    const metrics = await (await fetch(`http://127.0.0.1:${workerOpsPort}/metrics`)).text();
    expect(metrics).toMatch(/^ingest_queue_messages\{queue="ingest.content.dead"\} 1$/m);
    expect(metrics).toMatch(/^ingest_messages_total\{outcome="dead"\} 1$/m);
  });

  it('when batches were accepted and written, then the gateway and worker metrics count them', async () => {
    await post(`${gateway.url}/add`, buildBatch('e2e-metrics', 0, 7));
    expect(await waitForCount({ device_name: 'e2e-metrics' }, 7)).toBe(7);

    const gatewayMetrics = await gateway.registry.metrics();
    expect(gatewayMetrics).toMatch(
      /^gateway_http_requests_total\{route="\/add",method="POST",status="200"\} \d+$/m,
    );
    expect(gatewayMetrics).toMatch(/^gateway_batch_items_bucket\{le="10"\} [1-9]\d*$/m);
    const accepted = Number(/^gateway_items_accepted_total (\d+)$/m.exec(gatewayMetrics)?.[1]);
    const workerMetrics = await (await fetch(`http://127.0.0.1:${workerOpsPort}/metrics`)).text();
    const written = Number(/^ingest_items_written_total (\d+)$/m.exec(workerMetrics)?.[1]);
    const alreadyStored = Number(
      /^ingest_items_already_stored_total (\d+)$/m.exec(workerMetrics)?.[1],
    );
    // Every accepted item was handled once: newly written, or a re-sent copy already stored.
    expect(written).toBe(await items.countDocuments());
    expect(written + alreadyStored).toBe(accepted);
  });

  it('when the store starts, then its indexes exist (on MongoDB: FerretDB uses none but _id’s, so the store makes none there)', async () => {
    const names = (await items.indexes()).map((index) =>
      Object.keys(index.key as object).join(','),
    );
    const ferretDb = 'ferretdbVersion' in (await items.db.command({ buildInfo: 1 }));
    expect(names).toEqual(
      ferretDb ? ['_id'] : expect.arrayContaining(['device_name,timestamp', 'timestamp', 'tags']),
    );
  });
});
