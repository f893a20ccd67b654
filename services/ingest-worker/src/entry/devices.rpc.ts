import {
  AppError,
  SCHEMA_VERSION,
  TimeoutError,
  createEnvelope,
  toListingRow,
  validators,
  type DevicesReply,
  type DevicesRequest,
  type Envelope,
} from '@screenfleet/contracts';
import type { Logger } from '@screenfleet/runtime';
import type { ContentStore } from '@screenfleet/storage';
import { timelineSince, toDeviceRecords } from '../domain/device-records';

export interface DevicesRpcDeps {
  store: Pick<ContentStore, 'deviceCounters' | 'deviceListing' | 'newestItemTimes'>;
  logger: Logger;
  /** The clock the windows and the timeline end at (tests fix it). */
  now?: () => Date;
}

type Refusal = Extract<DevicesReply, { outcome: 'refused' }>;

/**
 * Translates devices.request messages into devices.reply: the store's per-device counters
 * (GET /devices, /devices/{name}), their listing rows, or only the newest item time per content
 * type (GET /health). Every request is answered, with what it asked or why not
 * (`store_unavailable`: the gateway answers 503).
 */
export function createDevicesRpcHandler({ store, logger, now = () => new Date() }: DevicesRpcDeps) {
  return async (request: Envelope<unknown>): Promise<Envelope<DevicesReply>> => {
    const reply = await answer(request);
    logger.debug(
      {
        requestId: request.correlation_id,
        outcome: reply.outcome === 'refused' ? reply.code : 'ok',
      },
      'devices answered',
    );
    return createEnvelope('devices.reply', reply, { correlationId: request.correlation_id });
  };

  async function answer(request: Envelope<unknown>): Promise<DevicesReply> {
    const errors =
      request.type !== 'devices.request' || request.schema_version !== SCHEMA_VERSION
        ? [{ detail: `not a devices.request v${SCHEMA_VERSION}` }]
        : validators.devicesRequest.check(request.payload);
    if (errors.length > 0) {
      return refuse('validation_failed', errors.map((error) => error.detail).join('; '));
    }
    const {
      devices,
      timeline = false,
      listing = false,
      newest = false,
      budget_ms: budgetMs,
    } = request.payload as DevicesRequest;
    const at = now();
    try {
      if (newest) {
        // Stopped at the budget (measured from here, on this worker's clock): the gateway
        // stops waiting then, and a read no one awaits would only hold a search's place.
        const times = await store.newestItemTimes(
          devices,
          budgetMs === undefined ? {} : { timeoutMs: budgetMs },
        );
        return { outcome: 'newest', newest: times };
      }
      if (listing) {
        return {
          outcome: 'listed',
          listing: (await store.deviceListing(devices)).map(toListingRow),
        };
      }
      const counters = await store.deviceCounters({
        now: at,
        ...(devices ? { devices } : {}),
        ...(timeline ? { hoursSince: timelineSince(at) } : {}),
      });
      return { outcome: 'ok', devices: toDeviceRecords(counters, at, timeline, devices) };
    } catch (error) {
      if (error instanceof TimeoutError) return refuse('deadline_exceeded', error.message);
      if (error instanceof AppError && error.code === 'store_unavailable') {
        logger.warn(
          { err: error, requestId: request.correlation_id },
          'devices: store unavailable',
        );
        return refuse('store_unavailable', error.message);
      }
      logger.error({ err: error, requestId: request.correlation_id }, 'devices failed');
      return refuse(
        'failed',
        'reading the device counters failed in the ingest worker (its log says why)',
      );
    }
  }
}

function refuse(code: Refusal['code'], message: string): Refusal {
  return { outcome: 'refused', code, message };
}
