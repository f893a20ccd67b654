import amqp from 'amqplib';
import { MongoClient, type Collection } from 'mongodb';
import { queueNames } from '@screenfleet/contracts';
import { databaseName, isolatedBroker, mongoUrl, uniqueName } from './services';
import { startGateway, type RunningGateway } from './support/gateway';
import { sendBatches } from './support/load';
import { startRefusingProxy, type RefusingProxy } from './support/mongo-refusing-proxy';
import { waitForCount } from './support/store';
import { startService, type ServiceProcess } from './support/processes';

// The real server, made to refuse writes as it does after a credential rotation: the driver
// and adapter see a reachable server answering code 13, not an outage.
describe('ingest when the store refuses writes for a while', () => {
  let broker: { url: string; remove(): Promise<void> };
  let gateway: RunningGateway;
  let proxy: RefusingProxy;
  let worker: ServiceProcess;
  let client: MongoClient;
  let items: Collection<Record<string, unknown>>;
  const database = databaseName('refusal');

  async function deadLetters(): Promise<number> {
    const connection = await amqp.connect(broker.url);
    try {
      const channel = await connection.createChannel();
      return (await channel.checkQueue(queueNames.ingestContentDead)).messageCount;
    } finally {
      await connection.close();
    }
  }

  beforeAll(async () => {
    broker = await isolatedBroker();
    gateway = await startGateway(broker.url);
    proxy = await startRefusingProxy(mongoUrl());
    worker = startService('ingest-worker', {
      RABBITMQ_URL: broker.url,
      MONGODB_URL: proxy.url,
      MONGODB_DATABASE: database,
      INGEST_OPS_PORT: '0',
      INGEST_RETRY_INITIAL: '50',
      INGEST_RETRY_MAX: '500',
      INGEST_CONNECTION_NAME: uniqueName('ingest'),
    });
    await worker.waitForLog(/consuming content batches/);
    client = await MongoClient.connect(mongoUrl());
    items = client.db(database).collection('content_items');
  });

  afterAll(async () => {
    await worker?.stop();
    await proxy?.close();
    await gateway?.close();
    await client?.db(database).dropDatabase();
    await client?.close();
    await broker?.remove();
  });

  it('when every insert is refused with code 13 (Unauthorized) for 2 s under load, then every batch is stored and none dead-lettered', async () => {
    let refusal: Promise<void> | undefined;
    const load = await sendBatches(gateway.url, {
      device: 'refused-13',
      batches: 40,
      size: 20,
      concurrency: 2,
      onAccepted: (n) => {
        if (n === 5) {
          proxy.refuse(
            {
              code: 13,
              codeName: 'Unauthorized',
              errmsg: 'not authorized on db to execute insert',
            },
            ['insert'],
          );
          refusal = new Promise((resolve) => setTimeout(resolve, 2000)).then(() => proxy.allow());
        }
      },
    });
    await refusal;

    expect(load.batches).toBe(40);
    expect(proxy.refused()).toBeGreaterThan(3);
    await worker.waitForLog(/content store unavailable; retrying/);
    expect(await waitForCount(items, { device_name: 'refused-13' }, 800, 30_000)).toBe(800);
    expect(await deadLetters()).toBe(0);
  });
});
