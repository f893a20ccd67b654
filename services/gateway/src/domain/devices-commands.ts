import {
  AppError,
  BadGatewayError,
  DeadlineExceededError,
  StoreUnavailableError,
  createEnvelope,
  fromListingRow,
  queueNames,
  searchTimings,
  validators,
  type DeviceCaptureRecord,
  type DeviceListing,
  type DevicesReply,
  type DevicesRequest,
  type NewestItemTimes,
} from '@screenfleet/contracts';
import type { Bus } from '@screenfleet/bus';
import { callWorkers } from './worker-call';

type DevicesCall = {
  timeoutMs: number;
  requestId: string;
  /** How long the request may wait to be taken (default timeoutMs): past it, it is never run. */
  expirationMs?: number;
};

/**
 * Asks the ingest workers (they own the content store: ADR 0008) for the device counters over
 * `search.rpc`, and returns the records or throws what the client should see: callWorkers'
 * errors (503 no worker or broker, 502 a reply breaking the contract), 503 the store down.
 */
export async function readDeviceRecords(
  bus: Pick<Bus, 'call'>,
  request: Omit<DevicesRequest, 'listing'>,
  options: DevicesCall,
): Promise<DeviceCaptureRecord[]> {
  const reply = await askWorkers(bus, request, options);
  if (reply.outcome === 'ok') return reply.devices;
  throw unexpected(reply.outcome);
}

/**
 * The same for the devices' listing rows (no counts: a fleet's devices to sort, filter and
 * page, or to judge /health on), read by name.
 */
export async function readDeviceListing(
  bus: Pick<Bus, 'call'>,
  devices: readonly string[] | undefined,
  options: DevicesCall,
): Promise<DeviceListing[]> {
  const request = { ...(devices ? { devices: [...devices] } : {}), listing: true };
  const reply = await askWorkers(bus, request, options);
  if (reply.outcome === 'listed') return reply.listing.map(fromListingRow);
  throw unexpected(reply.outcome);
}

/**
 * The newest item time per content type over these devices (absent: all): GET /health's
 * summary, one indexed read in the worker whatever the fleet's size. Asked with `listing` too,
 * so a worker that predates `newest` (it drops the field it does not know) answers the listing,
 * folded here to the same times: gateways and workers may be upgraded in any order. Split as a
 * search's wait is (searchTimings): the worker stops the read when the gateway would give up
 * on it (503 deadline_exceeded), so no summary read outlives its asker.
 */
export async function readNewestItemTimes(
  bus: Pick<Bus, 'call'>,
  devices: readonly string[] | undefined,
  options: DevicesCall,
): Promise<NewestItemTimes> {
  const { expirationMs, budgetMs } = searchTimings(options.timeoutMs);
  const request = {
    ...(devices ? { devices: [...devices] } : {}),
    newest: true,
    listing: true,
    budget_ms: budgetMs,
  };
  const reply = await askWorkers(bus, request, { ...options, expirationMs });
  if (reply.outcome === 'newest') return reply.newest;
  if (reply.outcome === 'listed') return newestOf(reply.listing.map(fromListingRow));
  throw unexpected(reply.outcome);
}

function newestOf(listing: readonly DeviceListing[]): NewestItemTimes {
  const newest = (field: 'last_frame_ms' | 'last_transcription_ms') =>
    listing.reduce<number | null>((last, device) => {
      const time = device[field];
      return time !== null && (last === null || time > last) ? time : last;
    }, null);
  return { frames: newest('last_frame_ms'), transcription: newest('last_transcription_ms') };
}

/** The reply, a refusal thrown as what the client should see. */
async function askWorkers(
  bus: Pick<Bus, 'call'>,
  request: DevicesRequest,
  options: DevicesCall,
): Promise<Exclude<DevicesReply, { outcome: 'refused' }>> {
  const reply = await callWorkers<DevicesReply>(bus, {
    queue: queueNames.searchRpc,
    worker: 'an ingest worker',
    request: createEnvelope('devices.request', request, { correlationId: options.requestId }),
    replyType: 'devices.reply',
    reply: validators.devicesReply,
    timeoutMs: options.timeoutMs,
    ...(options.expirationMs === undefined ? {} : { expirationMs: options.expirationMs }),
  });
  if (reply.outcome !== 'refused') return reply;
  switch (reply.code) {
    case 'store_unavailable':
      throw new StoreUnavailableError(`the content store is unavailable: ${reply.message}`);
    case 'validation_failed':
      throw new BadGatewayError(`the ingest worker refused the devices request: ${reply.message}`);
    case 'deadline_exceeded':
      throw new DeadlineExceededError(`the content store did not answer in time: ${reply.message}`);
    case 'failed':
      throw new AppError('operation_failed', reply.message);
  }
}

const unexpected = (outcome: string) =>
  new BadGatewayError(`the ingest worker answered the devices request with '${outcome}'`);
