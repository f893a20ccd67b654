import {
  createEnvelope,
  StoreUnavailableError,
  TimeoutError,
  validators,
  type DevicesReply,
  type DevicesRequest,
  type NewestItemTimes,
} from '@screenfleet/contracts';
import { createLogger } from '@screenfleet/runtime';
import type { ContentStore } from '@screenfleet/storage';
import { createDevicesRpcHandler } from './devices.rpc';

// The store is a fake: this is which read a devices.request asks of it, and its reply.
function handlerWith(newestItemTimes: ContentStore['newestItemTimes']) {
  const reads: string[] = [];
  const handle = createDevicesRpcHandler({
    store: {
      newestItemTimes: (devices, options) => {
        reads.push(`newest ${JSON.stringify(devices ?? null)} ${JSON.stringify(options ?? {})}`);
        return newestItemTimes(devices, options);
      },
      deviceListing: () => {
        reads.push('listing');
        return Promise.resolve([]);
      },
      deviceCounters: () => {
        reads.push('counters');
        return Promise.resolve([]);
      },
    },
    logger: createLogger({ service: 'test', level: 'silent' }),
  });
  const ask = async (payload: DevicesRequest): Promise<DevicesReply> => {
    const reply = await handle(createEnvelope('devices.request', payload));
    expect(validators.devicesReply.check(structuredClone(reply.payload))).toEqual([]);
    return reply.payload;
  };
  return { ask, reads };
}

const times: NewestItemTimes = { frames: 1_795_000_000_000, transcription: null };

describe('devices.request with newest', () => {
  it('when the newest item times are asked, then only they are read, over the devices named or all', async () => {
    const { ask, reads } = handlerWith(() => Promise.resolve(times));

    expect(await ask({ newest: true })).toEqual({ outcome: 'newest', newest: times });
    expect(
      await ask({ newest: true, listing: true, devices: ['desk-1'], budget_ms: 1400 }),
    ).toEqual({ outcome: 'newest', newest: times });
    expect(reads).toEqual(['newest null {}', 'newest ["desk-1"] {"timeoutMs":1400}']);
  });

  it('when newest is not asked, then the listing and the records are read as before', async () => {
    const { ask, reads } = handlerWith(() => Promise.resolve(times));

    expect(await ask({ listing: true })).toEqual({ outcome: 'listed', listing: [] });
    expect(await ask({})).toEqual({ outcome: 'ok', devices: [] });
    expect(reads).toEqual(['listing', 'counters']);
  });

  it('when the read runs past its budget, then the reply is deadline_exceeded', async () => {
    const { ask } = handlerWith(() => Promise.reject(new TimeoutError('stopped at 1400 ms')));

    expect(await ask({ newest: true, budget_ms: 1400 })).toMatchObject({
      outcome: 'refused',
      code: 'deadline_exceeded',
    });
  });

  it('when the store is unavailable, then the reply says so (the gateway answers degraded)', async () => {
    const { ask } = handlerWith(() => Promise.reject(new StoreUnavailableError('gone')));

    expect(await ask({ newest: true })).toMatchObject({
      outcome: 'refused',
      code: 'store_unavailable',
    });
  });
});
