import { fromListingRow, lastItemOf, toListingRow, type DeviceListing } from './device-listing';
import { validators } from './validators';

const device: DeviceListing = {
  device_name: 'desk',
  first_received_ms: 1,
  last_received_ms: 5,
  last_frame_ms: 4,
  last_transcription_ms: 3,
};

describe('device listing rows', () => {
  it('when a device is sent as a row, then the row is valid on the wire and reads back the same', () => {
    const row = toListingRow(device);
    expect(validators.devicesReply.check({ outcome: 'listed', listing: [row] })).toEqual([]);
    expect(fromListingRow(row)).toEqual(device);
  });

  it('when its newest item is asked, then the later of its types, the one it has, or null', () => {
    expect(lastItemOf(device)).toBe(4);
    expect(lastItemOf({ ...device, last_transcription_ms: 9 })).toBe(9);
    expect(lastItemOf({ ...device, last_frame_ms: null })).toBe(3);
    expect(lastItemOf({ ...device, last_frame_ms: null, last_transcription_ms: null })).toBeNull();
  });
});
