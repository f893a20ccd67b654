import { fromListingRow, lastItemOf, toListingRow, type DeviceListing } from './device-listing';
import { validators } from './registry';

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

describe('devices messages: the newest item times (GET /health)', () => {
  it('when newest is asked, then the request and its reply are valid, and a reply missing a type is not', () => {
    expect(
      validators.devicesRequest.check({ newest: true, listing: true, devices: ['desk'] }),
    ).toEqual([]);
    expect(
      validators.devicesReply.check({
        outcome: 'newest',
        newest: { frames: 4, transcription: null },
      }),
    ).toEqual([]);
    expect(
      validators.devicesReply.check({ outcome: 'newest', newest: { frames: 4 } }).length,
    ).toBeGreaterThan(0);
  });

  it('when a request or reply of before the flag is checked, then it is still valid', () => {
    expect(validators.devicesRequest.check({ listing: true })).toEqual([]);
    expect(validators.devicesReply.check({ outcome: 'listed', listing: [] })).toEqual([]);
  });
});
