import {
  createEnvelope,
  queueNames,
  topology,
  validators,
  type ArchiveReply,
} from '@screenfleet/contracts';
import { createAmqpBus, type Bus } from '@screenfleet/bus';
import { isolatedBroker } from '../../../test/services';
import {
  item,
  logger,
  openStores,
  settings,
  waitUntil,
  workerFor,
  allItems,
  type Stores,
} from './support';

describe('archive.rpc over the real broker', () => {
  let broker: { url: string; remove(): Promise<void> };
  const buses: Bus[] = [];
  let s: Stores;
  let worker: ReturnType<typeof workerFor>;

  beforeEach(async () => {
    broker = await isolatedBroker();
    s = await openStores('fs');
  });

  afterEach(async () => {
    await worker?.stop();
    for (const bus of buses.splice(0)) await bus.close();
    await s.close();
    await broker.remove();
  });

  async function bus(): Promise<Bus> {
    const b = await createAmqpBus({
      url: broker.url,
      topology,
      connectionName: 'archive-test',
      logger,
    });
    buses.push(b);
    return b;
  }

  async function call(client: Bus, payload: unknown): Promise<ArchiveReply> {
    const reply = await client.call<ArchiveReply>(
      queueNames.archiveRpc,
      createEnvelope('archive.command', payload),
      { timeoutMs: 5000 },
    );
    expect(reply.type).toBe('archive.reply');
    expect(validators.archiveReply.check(reply.payload)).toEqual([]);
    return reply.payload;
  }

  it('when the gateway sends each command, then the worker answers each as the contract says', async () => {
    await s.content.insertItems([item(20), item(21), item(1)]);
    worker = workerFor(s, { bus: await bus(), defaults: settings({ enabled: false }) });
    await worker.start();
    const client = await bus();

    const status = await call(client, { action: 'status' });
    expect(status).toMatchObject({
      outcome: 'ok',
      status: { enabled: false, pending_count: 2, chunks_uploaded: 0, watermark: null },
    });

    const init = await call(client, { action: 'init', request: { retention_days: 10 } });
    expect(init).toMatchObject({ outcome: 'ok', status: { enabled: true, retention_days: 10 } });
    expect(await call(client, { action: 'init', request: {} })).toMatchObject({
      outcome: 'refused',
      code: 'conflict',
    });

    // The pass records last_cleanup once it reached the cutoff.
    await waitUntil(
      () => worker.status(),
      (status) => status.last_cleanup !== null,
    );
    expect(await allItems(s.content)).toHaveLength(1);
    const after = await call(client, { action: 'status' });
    expect(after).toMatchObject({
      outcome: 'ok',
      status: { pending_count: 0, chunks_uploaded: 1, last_error: null },
    });
    expect(after.outcome === 'ok' && after.status.last_cleanup).toEqual(expect.any(String));

    expect(
      await call(client, {
        action: 'restore',
        request: { from: '2000-01-01T00:00:00Z', to: '2100-01-01T00:00:00Z' },
      }),
    ).toMatchObject({ outcome: 'refused', code: 'conflict' });
    expect(await allItems(s.content)).toHaveLength(1);

    expect(await call(client, { action: 'configure', request: { enabled: false } })).toMatchObject({
      outcome: 'ok',
      status: { enabled: false },
    });
    expect(await call(client, { action: 'run' })).toMatchObject({ outcome: 'ok' });

    const restored = await call(client, {
      action: 'restore',
      request: { from: '2000-01-01T00:00:00Z', to: '2100-01-01T00:00:00Z' },
    });
    expect(restored).toMatchObject({ outcome: 'ok', restored: 2 });
    expect(await allItems(s.content)).toHaveLength(3);

    expect(
      await call(client, { action: 'configure', request: { retention_days: 0 } }),
    ).toMatchObject({
      outcome: 'refused',
      code: 'validation_failed',
    });
  });
});
