import { createEnvelope, type OperatorPresence } from '@screenfleet/contracts';
import type { Bus, Delivery, Outcome } from '@screenfleet/bus';
import { createLogger } from '@screenfleet/runtime';
import { createOperatorPresence } from './operator-presence';

async function started() {
  let handler: ((delivery: Delivery<unknown>) => Promise<Outcome>) | undefined;
  const bus: Pick<Bus, 'consume'> = {
    consume: async <T>(_queue: string, h: (delivery: Delivery<T>) => Promise<Outcome>) => {
      handler = h as (delivery: Delivery<unknown>) => Promise<Outcome>;
      return { cancel: async () => undefined };
    },
  };
  const presence = createOperatorPresence({
    bus,
    logger: createLogger({ service: 'test', level: 'silent' }),
  });
  await presence.start();
  const announce = (payload: OperatorPresence) =>
    handler?.({
      envelope: createEnvelope('operator.presence', payload),
      redelivered: false,
      deliveryCount: 0,
    });
  return { presence, announce };
}

function thrown(action: () => unknown): unknown {
  try {
    action();
  } catch (error) {
    return error;
  }
  return undefined;
}

describe('operator presence', () => {
  it('when agents heartbeat and say goodbye, then each sighting keeps its last heartbeat time and whether it left', async () => {
    const { presence, announce } = await started();
    const before = Date.now();
    await announce({ device_name: 'desk-1', online: true, ttl_ms: 6000 });
    await announce({ device_name: 'desk-2', online: true, ttl_ms: 6000 });
    await announce({ device_name: 'desk-2', online: false, ttl_ms: 6000 });

    const seen = presence.sightings();
    expect(seen.get('desk-1')).toMatchObject({ ttlMs: 6000, gone: false });
    expect(seen.get('desk-1')?.lastHeartbeatMs).toBeGreaterThanOrEqual(before);
    expect(seen.get('desk-2')).toMatchObject({ gone: true });
    expect(seen.get('desk-2')?.lastHeartbeatMs).toBeGreaterThanOrEqual(before); // kept
    expect(presence.devices()).toEqual(['desk-1']);
  });

  it('when no agent announced itself, then a request without device_name is a 404', async () => {
    const { presence } = await started();
    expect(thrown(() => presence.resolve(undefined))).toMatchObject({
      code: 'device_unavailable',
    });
    expect(presence.resolve('desk-9')).toBe('desk-9');
  });

  it('when one agent is online, then it is used; when several are, then a 400 names them', async () => {
    const { presence, announce } = await started();
    await announce({ device_name: 'desk-1', online: true, ttl_ms: 6000 });
    expect(presence.resolve(undefined)).toBe('desk-1');
    await announce({ device_name: 'desk-2', online: true, ttl_ms: 6000 });
    expect(thrown(() => presence.resolve(undefined))).toMatchObject({
      code: 'validation_failed',
      fieldErrors: [{ detail: expect.stringContaining('desk-1, desk-2') }],
    });
    await announce({ device_name: 'desk-2', online: false, ttl_ms: 6000 });
    expect(presence.resolve(undefined)).toBe('desk-1');
  });

  it('when the token is bound to devices, then only those are chosen from and named', async () => {
    const { presence, announce } = await started();
    for (const device of ['desk-1', 'desk-2', 'desk-3', 'secret-9']) {
      await announce({ device_name: device, online: true, ttl_ms: 6000 });
    }
    expect(presence.resolve(undefined, { allowed: ['desk-2', 'gone-4'] })).toBe('desk-2');

    const several = thrown(() => presence.resolve(undefined, { allowed: ['desk-1', 'desk-3'] }));
    expect(several).toMatchObject({
      code: 'validation_failed',
      fieldErrors: [{ detail: expect.stringContaining('connected: desk-1, desk-3') }],
    });
    expect(JSON.stringify(several)).not.toContain('secret-9');
    expect(JSON.stringify(several)).not.toContain('desk-2');

    expect(thrown(() => presence.resolve(undefined, { allowed: ['gone-4'] }))).toMatchObject({
      code: 'device_unavailable',
      message: expect.not.stringContaining('desk-1'),
    });
  });

  it('when heartbeats stop, then the agent is forgotten after its ttl', async () => {
    const { presence, announce } = await started();
    await announce({ device_name: 'desk-1', online: true, ttl_ms: 6000 });
    expect(presence.devices(Date.now() + 5000)).toEqual(['desk-1']);
    expect(presence.devices(Date.now() + 7000)).toEqual([]);
  });
});
