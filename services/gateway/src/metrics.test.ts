import { createEnvelope, type OperatorPresence } from '@screenfleet/contracts';
import type { Bus, Delivery, Outcome } from '@screenfleet/bus';
import { createLogger, createMetrics } from '@screenfleet/runtime';
import { createGatewayMetrics } from './metrics';
import { createOperatorPresence } from './domain/operator-presence';

/** The presence view on a fake stream, its count wired to the gauge as createGateway wires it. */
async function started() {
  let handler: ((delivery: Delivery<unknown>) => Promise<Outcome>) | undefined;
  const bus: Pick<Bus, 'consume'> = {
    consume: async <T>(_queue: string, h: (delivery: Delivery<T>) => Promise<Outcome>) => {
      handler = h as (delivery: Delivery<unknown>) => Promise<Outcome>;
      return { cancel: async () => undefined };
    },
  };
  const registry = createMetrics();
  const metrics = createGatewayMetrics(registry).operator;
  const presence = createOperatorPresence({
    bus,
    logger: createLogger({ service: 'test', level: 'silent' }),
  });
  metrics.countAgentsWith(() => presence.devices().length);
  await presence.start();
  const announce = (payload: OperatorPresence) =>
    handler?.({
      envelope: createEnvelope('operator.presence', payload),
      redelivered: false,
      deliveryCount: 0,
    });
  const scraped = async (name: string) => (await registry.getSingleMetric(name)?.get())?.values;
  return { announce, scraped };
}

describe('operator metrics', () => {
  afterEach(() => jest.useRealTimers());

  it('when agents come, go and fall silent, then the connected gauge counts them at scrape time', async () => {
    jest.useFakeTimers({ now: Date.UTC(2026, 0, 1), doNotFake: ['nextTick', 'setImmediate'] });
    const { announce, scraped } = await started();
    expect(await scraped('gateway_operator_agents_connected')).toEqual([
      expect.objectContaining({ value: 0 }),
    ]);

    await announce({ device_name: 'desk-1', online: true, ttl_ms: 6000 });
    await announce({ device_name: 'desk-2', online: true, ttl_ms: 60_000 });
    await announce({ device_name: 'desk-3', online: true, ttl_ms: 60_000 });
    await announce({ device_name: 'desk-3', online: false, ttl_ms: 60_000 });
    expect(await scraped('gateway_operator_agents_connected')).toEqual([
      expect.objectContaining({ value: 2 }),
    ]);

    // desk-1's heartbeat expires with nobody asking for the devices in between.
    jest.setSystemTime(Date.UTC(2026, 0, 1) + 7000);
    expect(await scraped('gateway_operator_agents_connected')).toEqual([
      expect.objectContaining({ value: 1 }),
    ]);
  });

  it('when no command was sent yet, then each action has a success series at 0', async () => {
    const { scraped } = await started();
    expect(await scraped('gateway_operator_commands_total')).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ labels: { action: 'list', result: 'success' }, value: 0 }),
        expect.objectContaining({ labels: { action: 'press', result: 'success' }, value: 0 }),
      ]),
    );
  });
});
