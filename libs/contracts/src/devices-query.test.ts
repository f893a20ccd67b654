import { ValidationError } from './errors';
import { parseDevicesQuery } from './devices-query';

describe('GET /devices query', () => {
  it('when nothing is given, then 50 from the start, sorted by name', () => {
    expect(parseDevicesQuery({})).toEqual({ limit: 50, offset: 0, sort: 'device_name' });
  });

  it('when values are given, then they are read, and a limit over 1000 is capped', () => {
    expect(
      parseDevicesQuery({
        limit: '5000',
        offset: '7',
        status: 'unresponsive',
        sort: 'last_item_time',
      }),
    ).toEqual({ limit: 1000, offset: 7, status: 'unresponsive', sort: 'last_item_time' });
  });

  it('when values are bad or repeated, then a 400 names each parameter and rule', () => {
    let error: unknown;
    try {
      parseDevicesQuery({ limit: '0', offset: '-1', status: 'asleep', sort: ['a', 'b'] });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as ValidationError).fieldErrors.map((e) => [e.path, e.rule])).toEqual([
      ['query.limit', 'minimum'],
      ['query.offset', 'type'],
      ['query.status', 'enum'],
      ['query.sort', 'repeated'],
    ]);
  });
});
