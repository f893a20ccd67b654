import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import amqp from 'amqplib';
import { MongoClient, type Collection } from 'mongodb';
import {
  createEnvelope,
  exchangeNames,
  legacyQueueNames,
  queueNames,
  type ContentBatch,
} from '@screenfleet/contracts';
import { databaseName, isolatedBroker, mongoUrl, uniqueName } from './services';
import { waitForCount } from './support/store';
import { startService, type ServiceProcess } from './support/processes';

const root = path.resolve(__dirname, '..');
const run = promisify(execFile);

function batch(device: string): Buffer {
  const payload: ContentBatch = {
    received_at: new Date().toISOString(),
    request: {
      device_name: device,
      content: { content_type: 'frames', data: [{ file_path: 'a.png' }, { file_path: 'b.png' }] },
    },
  };
  return Buffer.from(JSON.stringify(createEnvelope('content.batch', payload)));
}

// Dead letters go back with `npm run dead-letters:replay`; the queue of the earlier topology is
// emptied into the current one by the worker at start. Real broker, real store.
describe('dead letters and the queue migration', () => {
  let broker: { url: string; remove(): Promise<void> };
  let client: MongoClient;
  let items: Collection<Record<string, unknown>>;
  let worker: ServiceProcess | undefined;
  const database = databaseName('dead');

  async function withChannel<T>(use: (channel: amqp.ConfirmChannel) => Promise<T>): Promise<T> {
    const connection = await amqp.connect(broker.url);
    connection.on('error', () => undefined);
    try {
      const channel = await connection.createConfirmChannel();
      channel.on('error', () => undefined);
      return await use(channel);
    } finally {
      await connection.close();
    }
  }

  const messagesIn = (queue: string) =>
    withChannel(async (channel) => (await channel.checkQueue(queue)).messageCount);

  function startWorker(): ServiceProcess {
    worker = startService('ingest-worker', {
      RABBITMQ_URL: broker.url,
      MONGODB_URL: mongoUrl(),
      MONGODB_DATABASE: database,
      INGEST_OPS_PORT: '0',
      INGEST_CONNECTION_NAME: uniqueName('ingest'),
    });
    return worker;
  }

  beforeAll(async () => {
    broker = await isolatedBroker();
    client = await MongoClient.connect(mongoUrl());
    items = client.db(database).collection('content_items');
  });

  afterEach(async () => {
    await worker?.stop();
    worker = undefined;
  });

  afterAll(async () => {
    await client?.db(database).dropDatabase();
    await client?.close();
    await broker?.remove();
  });

  it('when the old queue still holds batches, then the worker moves them to the new queue at start and deletes it', async () => {
    await withChannel(async (channel) => {
      await channel.assertExchange(exchangeNames.capture, 'topic', { durable: true });
      await channel.assertExchange(exchangeNames.captureDead, 'fanout', { durable: true });
      // The earlier declaration: at-most-once dead-lettering, which cannot be changed in place.
      await channel.assertQueue(legacyQueueNames.ingestContent, {
        durable: true,
        arguments: {
          'x-queue-type': 'quorum',
          'x-delivery-limit': 10,
          'x-dead-letter-exchange': exchangeNames.captureDead,
        },
      });
      await channel.bindQueue(legacyQueueNames.ingestContent, exchangeNames.capture, 'content.#');
      for (const device of ['legacy-1', 'legacy-2', 'legacy-3'])
        channel.publish(exchangeNames.capture, 'content.frames', batch(device), {
          persistent: true,
        });
      await channel.waitForConfirms();
    });

    const started = startWorker();
    expect((await started.waitForLog(/moved batches from the old queue/)).moved).toBe(3);
    await started.waitForLog(/consuming content batches/);

    expect(await waitForCount(items, { device_name: /^legacy-/ }, 6)).toBe(6);
    const legacyExists = await withChannel((channel) =>
      channel.checkQueue(legacyQueueNames.ingestContent).then(
        () => true,
        () => false,
      ),
    );
    expect(legacyExists).toBe(false);
  });

  it('when dead letters are replayed with a limit, then that many go back and are stored, the rest stay', async () => {
    await withChannel(async (channel) => {
      for (const device of ['dead-1', 'dead-2', 'dead-3'])
        channel.publish(exchangeNames.captureDead, 'content.frames', batch(device), {
          persistent: true,
          messageId: uniqueName('dead'),
        });
      await channel.waitForConfirms();
    });
    expect(await messagesIn(queueNames.ingestContentDead)).toBe(3);
    await startWorker().waitForLog(/consuming content batches/);

    const limited = await run(
      'npm',
      ['run', '--silent', 'dead-letters:replay', '--', '--limit', '2'],
      {
        cwd: root,
        env: { ...process.env, RABBITMQ_URL: broker.url },
      },
    );

    expect(limited.stdout).toContain('replayed 2 message(s)');
    expect(await waitForCount(items, { device_name: /^dead-/ }, 4)).toBe(4);
    expect(await messagesIn(queueNames.ingestContentDead)).toBe(1);

    const rest = await run('npm', ['run', '--silent', 'dead-letters:replay'], {
      cwd: root,
      env: { ...process.env, RABBITMQ_URL: broker.url },
    });
    expect(rest.stdout).toContain('replayed 1 message(s)');
    expect(await waitForCount(items, { device_name: /^dead-/ }, 6)).toBe(6);
    expect(await messagesIn(queueNames.ingestContentDead)).toBe(0);
  });
});
