import type { CaptureStatus } from './http/devices.routes';
import type { DeviceCaptureRecord } from './messages/devices.messages';

/**
 * capture_status, one rule for GET /devices (the gateway) and the DeviceCaptureStalled alert's
 * gauge (the ingest workers). ok: a batch that stored something was received within
 * CAPTURE_STALL_AFTER. stalled: the device was sending (batches received at two different
 * moments at least) and nothing came for longer. idle: never regular: nothing stored, or one
 * batch only (an import, a test), and not just now.
 */
export function captureStatusOf(
  record: Pick<DeviceCaptureRecord, 'first_received_ms' | 'last_received_ms'> | undefined,
  nowMs: number,
  stallAfterMs: number,
): CaptureStatus {
  const first = record?.first_received_ms ?? null;
  const last = record?.last_received_ms ?? null;
  if (last !== null && nowMs - last <= stallAfterMs) return 'ok';
  return first !== null && last !== null && first !== last ? 'stalled' : 'idle';
}
