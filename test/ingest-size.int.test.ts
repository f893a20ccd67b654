import amqp from 'amqplib';
import { MongoClient, type Collection } from 'mongodb';
import { exchangeNames, limits } from '@screenfleet/contracts';
import { databaseName, isolatedBroker, mongoUrl, rabbitmqctl, uniqueName } from './services';
import { buildBatch } from './support/content';
import { post, startGateway, type RunningGateway } from './support/gateway';
import { waitForCount } from './support/store';
import { startService, type ServiceProcess } from './support/processes';

const RABBITMQ_4_MAX_MESSAGE = 16 * 1024 * 1024;

// RabbitMQ 4 refuses messages over 16 MiB by default and closes the channel that sent one; the
// broker here (3.x) is set to the same limit for this test (node-wide, restored afterwards).
describe('ingest of bodies at the size limit', () => {
  let broker: { url: string; remove(): Promise<void> };
  let gateway: RunningGateway;
  let worker: ServiceProcess;
  let client: MongoClient;
  let items: Collection<Record<string, unknown>>;
  let previousLimit: string;
  const database = databaseName('size');

  beforeAll(async () => {
    previousLimit = (
      await rabbitmqctl(['eval', '{ok, V} = application:get_env(rabbit, max_message_size), V.'])
    ).trim();
    await rabbitmqctl([
      'eval',
      `application:set_env(rabbit, max_message_size, ${RABBITMQ_4_MAX_MESSAGE}).`,
    ]);
    broker = await isolatedBroker();
    gateway = await startGateway(broker.url, { publishTimeoutMs: 15_000 });
    worker = startService('ingest-worker', {
      RABBITMQ_URL: broker.url,
      MONGODB_URL: mongoUrl(),
      MONGODB_DATABASE: database,
      INGEST_OPS_PORT: '0',
      INGEST_CONNECTION_NAME: uniqueName('ingest'),
    });
    await worker.waitForLog(/consuming content batches/);
    client = await MongoClient.connect(mongoUrl());
    items = client.db(database).collection('content_items');
  });

  afterAll(async () => {
    if (/^\d+$/.test(previousLimit ?? ''))
      await rabbitmqctl([
        'eval',
        `application:set_env(rabbit, max_message_size, ${previousLimit}).`,
      ]);
    await worker?.stop();
    await gateway?.close();
    await client?.db(database).dropDatabase();
    await client?.close();
    await broker?.remove();
  });

  it('when a message over 16 MiB is published directly, then the broker closes the channel (the limit is in force)', async () => {
    const connection = await amqp.connect(broker.url);
    connection.on('error', () => undefined);
    const channel = await connection.createConfirmChannel();
    const closed = new Promise<Error>((resolve) => channel.on('error', resolve));
    channel.publish(exchangeNames.capture, 'nowhere', Buffer.alloc(RABBITMQ_4_MAX_MESSAGE + 1));
    expect(String(await closed)).toMatch(/max size|PRECONDITION_FAILED/);
    await connection.close().catch(() => undefined);
  });

  it('when a body near the limit is posted among small ones, then every batch is accepted and stored', async () => {
    const itemText = 'y'.repeat(270 * 1024);
    const big = {
      device_name: 'size-big',
      content: {
        content_type: 'frames',
        data: Array.from({ length: 60 }, (_, i) => ({
          file_path: `big-${i}`,
          timestamp: `2026-11-22T10:00:${String(i).padStart(2, '0')}Z`,
          ocr_results: [{ text: itemText }],
        })),
      },
    };
    const bodyBytes = Buffer.byteLength(JSON.stringify(big));
    expect(bodyBytes).toBeGreaterThan(RABBITMQ_4_MAX_MESSAGE - 512 * 1024);
    expect(bodyBytes).toBeLessThanOrEqual(limits.maxBodyBytes);

    const answers = await Promise.all([
      post(`${gateway.url}/add`, big),
      ...Array.from({ length: 20 }, (_, i) =>
        post(`${gateway.url}/add`, buildBatch('size-small', i * 5, 5)),
      ),
    ]);

    expect(answers.map((a) => a.status)).toEqual(answers.map(() => 200));
    expect(await waitForCount(items, { device_name: 'size-big' }, 60, 60_000)).toBe(60);
    expect(await waitForCount(items, { device_name: 'size-small' }, 100)).toBe(100);
  });

  it('when one item alone cannot fit a broker message, then 413 names it and concurrent batches are unharmed', async () => {
    const huge = {
      device_name: 'size-huge',
      content: {
        content_type: 'frames',
        // Each OCR text within the schema's 1M characters; together over one message's room.
        data: [
          {
            file_path: 'huge',
            ocr_results: [
              ...Array.from({ length: 16 }, () => ({ text: 'z'.repeat(1_000_000) })),
              { text: 'z'.repeat(720_000) },
            ],
          },
        ],
      },
    };

    const [answer, ...others] = await Promise.all([
      post(`${gateway.url}/add`, huge),
      ...Array.from({ length: 10 }, (_, i) =>
        post(`${gateway.url}/add`, buildBatch('size-beside', i * 5, 5)),
      ),
    ]);

    expect(answer.status).toBe(413);
    expect(answer.body).toMatchObject({ errors: [{ path: 'content.data[0]' }] });
    expect(others.map((a) => a.status)).toEqual(others.map(() => 200));
    expect(await waitForCount(items, { device_name: 'size-beside' }, 50)).toBe(50);
  });
});
