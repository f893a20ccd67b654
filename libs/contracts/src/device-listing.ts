import type { DeviceListingRow } from './messages/devices.messages';

/**
 * One device as GET /devices sorts and filters it and GET /health judges it: devices.reply's
 * listing row (deviceListingRowSchema, a tuple on the wire) read by name.
 */
export interface DeviceListing {
  device_name: string;
  /** When the gateway received the device's first and latest batch that stored something. */
  first_received_ms: number | null;
  last_received_ms: number | null;
  /** The newest item time of each content type (null: none stored). */
  last_frame_ms: number | null;
  last_transcription_ms: number | null;
}

export function toListingRow(device: DeviceListing): DeviceListingRow {
  return [
    device.device_name,
    device.first_received_ms,
    device.last_received_ms,
    device.last_frame_ms,
    device.last_transcription_ms,
  ];
}

export function fromListingRow([
  device_name,
  first_received_ms,
  last_received_ms,
  last_frame_ms,
  last_transcription_ms,
]: DeviceListingRow): DeviceListing {
  return { device_name, first_received_ms, last_received_ms, last_frame_ms, last_transcription_ms };
}

/** The device's newest item time over its content types (ms), or null when it has none. */
export function lastItemOf(device: DeviceListing): number | null {
  const { last_frame_ms: frame, last_transcription_ms: audio } = device;
  return frame === null ? audio : audio === null ? frame : Math.max(frame, audio);
}
