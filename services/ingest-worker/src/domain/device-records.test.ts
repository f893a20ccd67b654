import type { DeviceCounters } from '@screenfleet/storage';
import { timelineSince, toDeviceRecords } from './device-records';

const now = new Date('2026-11-22T10:30:00Z');
const at = (iso: string) => new Date(iso);

const counters: DeviceCounters = {
  deviceName: 'desk',
  byContentType: [
    {
      contentType: 'frames',
      itemsStored: 5,
      firstItemTime: at('2026-11-01T00:00:00Z'),
      lastItemTime: at('2026-11-22T10:05:00Z'),
      firstReceivedAt: at('2026-11-01T00:00:01Z'),
      lastReceivedAt: at('2026-11-22T10:05:01Z'),
      itemsLastHour: 3,
      itemsLast24h: 4,
    },
    {
      contentType: 'transcription',
      itemsStored: 1,
      firstItemTime: at('2026-10-30T00:00:00Z'),
      lastItemTime: at('2026-11-20T00:00:00Z'),
      firstReceivedAt: at('2026-10-30T00:00:02Z'),
      lastReceivedAt: at('2026-11-20T00:00:02Z'),
      itemsLastHour: 0,
      itemsLast24h: 0,
    },
  ],
  itemsArchived: 7,
  lastArchivedItemTime: at('2026-10-01T00:00:00Z'),
  hours: [
    { start: at('2026-10-24T00:00:00Z'), items: 1 }, // the first day of the 30
    { start: at('2026-11-21T09:00:00Z'), items: 1 }, // 25 hours ago: daily only
    { start: at('2026-11-22T09:00:00Z'), items: 2 },
    { start: at('2026-11-22T10:00:00Z'), items: 3 },
  ],
};

describe('device records', () => {
  it('when counters are mapped, then the device keeps its earliest first times and latest received time', () => {
    const [record] = toDeviceRecords([counters], now, false);
    const ms = (iso: string) => Date.parse(iso);
    expect(record).toEqual({
      device_name: 'desk',
      first_item_ms: ms('2026-10-30T00:00:00Z'),
      first_received_ms: ms('2026-10-30T00:00:02Z'),
      last_received_ms: ms('2026-11-22T10:05:01Z'),
      by_content_type: {
        frames: [5, ms('2026-11-22T10:05:00Z'), 3, 4],
        transcription: [1, ms('2026-11-20T00:00:00Z'), 0, 0],
      },
      items_archived: 7,
      last_archived_item_ms: ms('2026-10-01T00:00:00Z'),
    });
  });

  it('when a timeline is asked, then 24 hours and 30 days end now, oldest first, zeros included', () => {
    expect(timelineSince(now).toISOString()).toBe('2026-10-24T00:00:00.000Z');
    const [record] = toDeviceRecords([counters], now, true);
    const { hourly, daily } = record!.timeline!;
    expect(hourly).toHaveLength(24);
    expect(hourly[0]).toEqual({ start: '2026-11-21T11:00:00.000Z', items: 0 });
    expect(hourly.slice(-2)).toEqual([
      { start: '2026-11-22T09:00:00.000Z', items: 2 },
      { start: '2026-11-22T10:00:00.000Z', items: 3 },
    ]);
    expect(daily).toHaveLength(30);
    expect(daily[0]).toEqual({ start: '2026-10-24T00:00:00.000Z', items: 1 });
    expect(daily.slice(-2)).toEqual([
      { start: '2026-11-21T00:00:00.000Z', items: 1 },
      { start: '2026-11-22T00:00:00.000Z', items: 5 },
    ]);
  });

  it('when a timeline is asked for a device without counters, then it gets an all-zero record', () => {
    const [record] = toDeviceRecords([], now, true, ['new']);
    expect(record).toMatchObject({
      device_name: 'new',
      by_content_type: {},
      last_received_ms: null,
    });
    expect(record!.timeline!.daily.every((d) => d.items === 0)).toBe(true);
    expect(toDeviceRecords([], now, false, ['new'])).toEqual([]);
  });
});
