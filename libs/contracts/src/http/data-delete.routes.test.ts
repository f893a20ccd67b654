import { toDataDeleteRange, toDeletedDevice, validators, ValidationError } from '../index';

const range = validators.dataDeleteRangeRequest;
const device = validators.dataDeleteDeviceRequest;

describe('POST /data/delete-range bodies', () => {
  it('when start_time and end_time are sent (ours), then they are the range', () => {
    const body = range.parse({
      start_time: '2026-11-01T10:00:00Z',
      end_time: '2026-11-01T12:00:00+01:00',
      device_name: 'laptop',
    });
    expect(toDataDeleteRange(body)).toEqual({
      start: '2026-11-01T10:00:00Z',
      end: '2026-11-01T12:00:00+01:00',
      device_name: 'laptop',
    });
  });

  it("when screenpipe's desktop app sends start, end and local_only, then start and end are the range", () => {
    const body = range.parse({
      start: '2026-11-01T10:00:00.123Z',
      end: '2026-11-01T10:15:00.456Z',
      local_only: true,
    });
    expect(toDataDeleteRange(body)).toEqual({
      start: '2026-11-01T10:00:00.123Z',
      end: '2026-11-01T10:15:00.456Z',
    });
  });

  it('when the start is missing, then a 400 names start_time as required', () => {
    expect(range.check({ end_time: '2026-11-01T11:00:00Z' })).toEqual([
      { path: 'start_time', rule: 'required', detail: 'start_time is required (or start)' },
    ]);
  });

  it('when the body is empty, then both bounds are named', () => {
    expect(range.check({}).map((error) => error.path)).toEqual(['start_time', 'end_time']);
  });

  it('when the end is not after the start, then both fields are named with rule range', () => {
    const errors = range.check({
      start_time: '2026-11-01T11:00:00Z',
      end_time: '2026-11-01T12:00:00+01:00',
    });
    expect(errors).toEqual([
      {
        path: 'start_time',
        rule: 'range',
        detail: 'start_time must be before end_time (end_time is exclusive)',
      },
      {
        path: 'end_time',
        rule: 'range',
        detail: 'end_time must be after start_time (end_time is exclusive)',
      },
    ]);
  });

  it('when both spellings of a bound are sent, then a 400 says to send one', () => {
    expect(
      range.check({
        start_time: '2026-11-01T10:00:00Z',
        start: '2026-11-01T10:00:00Z',
        end: '2026-11-01T11:00:00Z',
      }),
    ).toEqual([
      {
        path: 'start',
        rule: 'conflict',
        detail: 'start_time and start name the same thing: send one of them',
      },
    ]);
  });

  it('when a bound is not a date-time with an offset, then the field is named', () => {
    const errors = range.check({ start_time: '2026-11-01', end_time: '2026-11-02T00:00:00Z' });
    expect(errors.map((error) => error.path)).toEqual(['start_time']);
    expect(() => range.parse({ start_time: 'yesterday' })).toThrow(ValidationError);
  });
});

describe('POST /data/delete-device bodies', () => {
  it.each([
    [{ device_name: 'old-laptop' }],
    [{ machine_id: 'old-laptop' }],
    [{ device_id: 'old-laptop' }],
  ])('when the device is sent as %j, then it is the device', (body) => {
    expect(toDeletedDevice(device.parse(body))).toBe('old-laptop');
  });

  it('when no device is named, then a 400 names device_name as required', () => {
    expect(device.check({ name: 'x' })).toEqual([
      {
        path: 'device_name',
        rule: 'required',
        detail: 'device_name is required (or machine_id or device_id)',
      },
    ]);
  });

  it('when two spellings are sent, then a 400 says to send one', () => {
    expect(device.check({ device_name: 'a', machine_id: 'b' })[0]).toMatchObject({
      path: 'machine_id',
      rule: 'conflict',
    });
  });

  it('when the device name is empty, then the field is named', () => {
    expect(device.check({ device_name: '' }).map((error) => error.path)).toEqual(['device_name']);
  });
});
