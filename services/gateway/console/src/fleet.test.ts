import {
  agentStatuses as contractAgentStatuses,
  captureStatuses as contractCaptureStatuses,
} from '@screenfleet/contracts';
import {
  agentCounts,
  agentStatuses,
  captureStatuses,
  archiveShare,
  busiest24h,
  captureCounts,
  filterDevices,
  onlineDeviceNames,
  readFleetFilter,
  writeFleetFilter,
} from './fleet';
import { buildDeviceSummary, buildFleet } from './fleet.fixture';

describe("the console's copy of the statuses", () => {
  it('when compared with the contracts (the console cannot import their code), then they are equal', () => {
    expect(captureStatuses).toEqual(contractCaptureStatuses);
    expect(agentStatuses).toEqual(contractAgentStatuses);
  });
});

describe('the fleet filter in the hash', () => {
  it('when written and read back, then it is the same, and only what is set is written', () => {
    const filter = { capture: 'stalled', agent: 'offline', name: 'desk' } as const;
    const query = writeFleetFilter(filter);
    expect(query.toString()).toBe('capture=stalled&agent=offline&name=desk');
    expect(readFleetFilter(query)).toEqual(filter);
    expect(writeFleetFilter({ capture: '', agent: '', name: '  ' }).toString()).toBe('');
  });

  it('when the hash names an unknown status, then that part of the filter is "any"', () => {
    expect(readFleetFilter(new URLSearchParams('capture=broken&agent=ONLINE'))).toEqual({
      capture: '',
      agent: '',
      name: '',
    });
  });
});

describe('filterDevices', () => {
  const fleet = [
    buildDeviceSummary('Desk-A', { capture_status: 'stalled' }),
    buildDeviceSummary('laptop-b'),
    buildDeviceSummary('desk-c', {
      agent: { status: 'offline', last_heartbeat_time: null },
    }),
  ];
  const names = (filter: Parameters<typeof filterDevices>[1]) =>
    filterDevices(fleet, filter).map((d) => d.device_name);

  it('when filtered by part of a name, then case is ignored', () => {
    expect(names({ capture: '', agent: '', name: ' DESK ' })).toEqual(['Desk-A', 'desk-c']);
  });

  it('when filtered by capture and agent status, then both must hold', () => {
    expect(names({ capture: 'ok', agent: '', name: '' })).toEqual(['laptop-b', 'desk-c']);
    expect(names({ capture: 'ok', agent: 'offline', name: 'desk' })).toEqual(['desk-c']);
    expect(names({ capture: 'idle', agent: '', name: '' })).toEqual([]);
  });

  it('when counted, then every status is named, zeros too', () => {
    expect(captureCounts(fleet)).toEqual({ ok: 2, stalled: 1, idle: 0 });
    expect(agentCounts(fleet)).toEqual({ online: 2, unresponsive: 0, offline: 1 });
    expect(onlineDeviceNames(fleet)).toEqual(['Desk-A', 'laptop-b']);
  });
});

describe('archiveShare', () => {
  it('when some items are archived, then the share is archived over archived plus stored', () => {
    const device = buildDeviceSummary('d');
    expect(archiveShare(device)).toBeCloseTo(300 / 1500);
  });

  it('when a device has no items at all, then there is no share (not 0 %)', () => {
    const base = buildDeviceSummary('d');
    const empty = {
      ...base,
      capture: { ...base.capture, items_stored: 0 },
      archive: { items_archived: 0, last_archived_item_time: null },
    };
    expect(archiveShare(empty)).toBeUndefined();
  });
});

describe('busiest24h', () => {
  it('when the fleet is quiet or empty, then the scale is 1, never 0', () => {
    expect(busiest24h([])).toBe(1);
    expect(busiest24h(buildFleet(5))).toBe(
      Math.max(...buildFleet(5).map((d) => d.capture.items_last_24h)),
    );
  });
});
