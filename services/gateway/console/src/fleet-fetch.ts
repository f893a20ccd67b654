import type { DevicesAnswer, DeviceSummary } from '@screenfleet/contracts';
import type { Api } from './api.js';

/** Devices asked per request: the gateway's cap (devicesMaxLimit); if it answers fewer, the loop follows. */
export const fleetPageSize = 1000;

/**
 * Every device GET /devices lists (a bound token: its own), page by page until the total. The
 * Fleet view filters and counts on the whole list, so a filter change asks the server nothing.
 */
export async function fetchFleet(api: Pick<Api, 'get'>): Promise<DeviceSummary[]> {
  const devices: DeviceSummary[] = [];
  for (;;) {
    const query = new URLSearchParams({
      limit: String(fleetPageSize),
      offset: String(devices.length),
      sort: 'device_name',
    });
    const page = await api.get<DevicesAnswer>('/devices', query);
    devices.push(...page.data);
    if (page.data.length === 0 || devices.length >= page.pagination.total) return devices;
  }
}
