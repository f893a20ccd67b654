import { devicesMaxLimit, type DevicesAnswer } from '@screenfleet/contracts';
import { fetchFleet, fleetPageSize } from './fleet-fetch';
import { buildFleet } from './fleet.fixture';

/** GET /devices over `fleet`, answering at most `cap` devices a page (the gateway's own limit). */
function fakeApi(fleet: ReturnType<typeof buildFleet>, cap: number) {
  const asked: string[] = [];
  return {
    asked,
    get: <T>(path: string, query?: URLSearchParams): Promise<T> => {
      asked.push(`${path}?${query}`);
      const offset = Number(query?.get('offset'));
      const limit = Math.min(cap, Number(query?.get('limit')));
      const body: DevicesAnswer = {
        data: fleet.slice(offset, offset + limit),
        pagination: { limit, offset, total: fleet.length },
      };
      return Promise.resolve(body as T);
    },
  };
}

describe('fetchFleet', () => {
  it("when it pages, then it asks for the gateway's largest page", () => {
    expect(fleetPageSize).toBe(devicesMaxLimit);
  });

  it('when the fleet is larger than a page, then it asks page after page until the total', async () => {
    const fleet = buildFleet(2_345);
    const api = fakeApi(fleet, fleetPageSize);
    expect(await fetchFleet(api)).toEqual(fleet);
    expect(api.asked).toEqual([
      `/devices?limit=${fleetPageSize}&offset=0&sort=device_name`,
      `/devices?limit=${fleetPageSize}&offset=1000&sort=device_name`,
      `/devices?limit=${fleetPageSize}&offset=2000&sort=device_name`,
    ]);
  });

  it('when the gateway answers fewer than asked, then the next page starts after what came', async () => {
    const fleet = buildFleet(250);
    const api = fakeApi(fleet, 100);
    expect((await fetchFleet(api)).length).toBe(250);
    expect(api.asked.map((a) => new URLSearchParams(a.split('?')[1]).get('offset'))).toEqual([
      '0',
      '100',
      '200',
    ]);
  });

  it('when there are no devices, then one request answers that', async () => {
    const api = fakeApi([], fleetPageSize);
    expect(await fetchFleet(api)).toEqual([]);
    expect(api.asked).toHaveLength(1);
  });
});
