import amqp from 'amqplib';
import { MongoClient, type Collection } from 'mongodb';
import { queueNames } from '@screenfleet/contracts';
import { createMongoContentStore } from '@screenfleet/storage';
import {
  closeBrokerConnections,
  databaseName,
  isolatedBroker,
  killMongo,
  mongoUrl,
  startMongo,
  uniqueName,
} from './services';
import { post, startGateway, type RunningGateway } from './support/gateway';
import { sendBatches } from './support/load';
import { waitForCount as storedCount } from './support/store';
import { startService, type ServiceProcess } from './support/processes';

// Faults under load; after each, exact counts: every accepted item stored once, none lost.
describe('ingest under faults', () => {
  let broker: { url: string; remove(): Promise<void> };
  let gateway: RunningGateway;
  let client: MongoClient;
  let items: Collection<Record<string, unknown>>;
  const database = databaseName('faults');
  const workers = new Set<ServiceProcess>();

  function startWorker(name = uniqueName('ingest')): ServiceProcess {
    const worker = startService('ingest-worker', {
      RABBITMQ_URL: broker.url,
      MONGODB_URL: mongoUrl(),
      MONGODB_DATABASE: database,
      INGEST_OPS_PORT: '0',
      INGEST_RETRY_INITIAL: '50',
      INGEST_RETRY_MAX: '500',
      INGEST_CONNECTION_NAME: name,
    });
    workers.add(worker);
    return worker;
  }

  const waitForCount = (device: string, expected: number) =>
    storedCount(items, { device_name: device }, expected, 60_000);

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
    client = await MongoClient.connect(mongoUrl());
    items = client.db(database).collection('content_items');
  });

  afterAll(async () => {
    await Promise.all([...workers].map((worker) => worker.stop('SIGKILL')));
    await gateway?.close();
    await client?.db(database).dropDatabase();
    await client?.close();
    await broker?.remove();
  });

  it('when the worker is killed with SIGKILL mid-stream and restarted, then every item is stored exactly once', async () => {
    const first = startWorker();
    await first.waitForLog(/consuming content batches/);
    let killed: Promise<unknown> | undefined;

    const load = await sendBatches(gateway.url, {
      device: 'fault-kill',
      batches: 60,
      size: 50,
      onAccepted: (n) => {
        if (n === 20)
          killed = first
            .stop('SIGKILL')
            .then(() => startWorker().waitForLog(/consuming content batches/));
      },
    });
    await killed;

    expect(load.batches).toBe(60);
    expect(await waitForCount('fault-kill', 3000)).toBe(3000);
    await post(`${gateway.url}/add`, {
      device_name: 'fault-kill-end',
      content: { content_type: 'frames', data: [{ file_path: 'end' }] },
    });
    await waitForCount('fault-kill-end', 1);
    expect(await items.countDocuments({ device_name: 'fault-kill' })).toBe(3000);
    expect(await deadLetters()).toBe(0);
    // The device counters too: a batch whose worker died after storing it is counted by its
    // redelivery, once (mongo.device-counters.ts).
    const store = createMongoContentStore({
      url: mongoUrl(),
      database,
      countFolding: { intervalMs: 0 },
    });
    try {
      const [device] = await store.deviceCounters({ now: new Date(), devices: ['fault-kill'] });
      expect(device?.byContentType[0]?.itemsStored).toBe(3000);
    } finally {
      await store.close();
    }
  });

  it('when the broker closes the gateway and worker connections under load, then every accepted item is stored exactly once', async () => {
    const name = uniqueName('ingest');
    const worker = startWorker(name);
    await worker.waitForLog(/consuming content batches/);
    let closed: Promise<number[]> | undefined;

    const load = await sendBatches(gateway.url, {
      device: 'fault-broker',
      batches: 60,
      size: 50,
      onAccepted: (n) => {
        if (n === 20)
          closed = Promise.all([
            closeBrokerConnections(gateway.connectionName),
            closeBrokerConnections(name),
          ]);
      },
    });

    expect(await closed).toEqual([1, 1]);
    expect(load.batches).toBe(60);
    expect(await waitForCount('fault-broker', 3000)).toBe(3000);
    await post(`${gateway.url}/add`, {
      device_name: 'fault-broker-end',
      content: { content_type: 'frames', data: [{ file_path: 'end' }] },
    });
    await waitForCount('fault-broker-end', 1);
    expect(await items.countDocuments({ device_name: 'fault-broker' })).toBe(3000);
    expect(await deadLetters()).toBe(0);
  });

  it('when the database server is killed and restarted under load, then every item is stored exactly once and none is dead-lettered', async () => {
    const worker = startWorker();
    await worker.waitForLog(/consuming content batches/);
    let outage: Promise<void> | undefined;
    let down = false;

    try {
      const load = await sendBatches(gateway.url, {
        device: 'fault-db',
        batches: 60,
        size: 50,
        onAccepted: (n) => {
          if (n === 20) {
            outage = (async () => {
              await killMongo();
              down = true;
              await worker.waitForLog(/content store unavailable; retrying/);
              await startMongo();
              down = false;
            })();
          }
        },
      });
      await outage;
      expect(load.batches).toBe(60);
    } finally {
      await outage?.catch(() => undefined);
      // Later test files need the server back, whatever happened here.
      if (down) await startMongo();
    }

    expect(await waitForCount('fault-db', 3000)).toBe(3000);
    expect(await items.countDocuments({ device_name: 'fault-db' })).toBe(3000);
    expect(await deadLetters()).toBe(0);
  });
});
