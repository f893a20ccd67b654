import { fromJson, toJson } from './sqlite-json';

describe('sqlite JSON encoding', () => {
  it('when a value holds Dates at any depth, then they come back as equal Dates', () => {
    const value = {
      at: new Date('2026-11-22T10:00:00.123Z'),
      nested: { list: [new Date(0), 'text', null], deeper: { when: new Date(1_700_000_000_000) } },
      plain: 'no date',
      count: 3_000_000_000,
      flag: false,
      nothing: null,
    };

    const decoded = fromJson<typeof value>(toJson(value));

    expect(decoded).toEqual(value);
    expect(decoded.at).toBeInstanceOf(Date);
    expect(decoded.nested.list[0]).toBeInstanceOf(Date);
    expect(decoded.nested.deeper.when.toISOString()).toBe('2023-11-14T22:13:20.000Z');
  });

  it('when a Date is invalid, then it comes back as an invalid Date', () => {
    const decoded = fromJson<{ at: Date }>(toJson({ at: new Date(Number.NaN) }));

    expect(decoded.at).toBeInstanceOf(Date);
    expect(Number.isNaN(decoded.at.getTime())).toBe(true);
  });

  it('when an ISO string is stored as a string, then it stays a string', () => {
    const value = { text: '2026-11-22T10:00:00.000Z', tagged: { $date: 'x', other: 1 } };

    expect(fromJson(toJson(value))).toEqual(value);
  });

  it('when a value holds what JSON leaves out or encodes by toJSON, then it is encoded as JSON.stringify encodes it', () => {
    const value = {
      absent: undefined,
      list: [undefined, 1, () => 2],
      own: { toJSON: () => 'encoded by its toJSON' },
      big: { nested: [{ at: new Date(0), left: undefined }] },
    };

    expect(toJson(value)).toBe(
      JSON.stringify({
        ...value,
        big: { nested: [{ at: { $date: '1970-01-01T00:00:00.000Z' } }] },
      }),
    );
  });
});
