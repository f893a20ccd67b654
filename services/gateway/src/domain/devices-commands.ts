import {
  AppError,
  BadGatewayError,
  StoreUnavailableError,
  createEnvelope,
  queueNames,
  validators,
  type DeviceCaptureRecord,
  type DevicesReply,
  type DevicesRequest,
} from '@screenfleet/contracts';
import type { Bus } from '@screenfleet/bus';
import { callWorkers } from './worker-call';

/**
 * Asks the ingest workers (they own the content store: ADR 0008) for the device counters over
 * `search.rpc`, and returns the records or throws what the client should see: callWorkers'
 * errors (503 no worker or broker, 502 a reply breaking the contract), 503 the store down.
 */
export async function readDeviceRecords(
  bus: Pick<Bus, 'call'>,
  request: DevicesRequest,
  options: { timeoutMs: number; requestId: string },
): Promise<DeviceCaptureRecord[]> {
  const reply = await callWorkers<DevicesReply>(bus, {
    queue: queueNames.searchRpc,
    worker: 'an ingest worker',
    request: createEnvelope('devices.request', request, { correlationId: options.requestId }),
    replyType: 'devices.reply',
    reply: validators.devicesReply,
    timeoutMs: options.timeoutMs,
  });
  if (reply.outcome === 'ok') return reply.devices;
  switch (reply.code) {
    case 'store_unavailable':
      throw new StoreUnavailableError(`the content store is unavailable: ${reply.message}`);
    case 'validation_failed':
      throw new BadGatewayError(`the ingest worker refused the devices request: ${reply.message}`);
    case 'failed':
      throw new AppError('operation_failed', reply.message);
  }
}
