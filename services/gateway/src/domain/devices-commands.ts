import {
  AppError,
  BadGatewayError,
  StoreUnavailableError,
  createEnvelope,
  fromListingRow,
  queueNames,
  validators,
  type DeviceCaptureRecord,
  type DeviceListing,
  type DevicesReply,
  type DevicesRequest,
} from '@screenfleet/contracts';
import type { Bus } from '@screenfleet/bus';
import { callWorkers } from './worker-call';

type DevicesCall = { timeoutMs: number; requestId: string };

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
  });
  if (reply.outcome !== 'refused') return reply;
  switch (reply.code) {
    case 'store_unavailable':
      throw new StoreUnavailableError(`the content store is unavailable: ${reply.message}`);
    case 'validation_failed':
      throw new BadGatewayError(`the ingest worker refused the devices request: ${reply.message}`);
    case 'failed':
      throw new AppError('operation_failed', reply.message);
  }
}

const unexpected = (outcome: string) =>
  new BadGatewayError(`the ingest worker answered the devices request with '${outcome}'`);
