import { limits, parseSearchQuery, ValidationError, type FieldError } from './index';

const now = new Date('2026-11-22T12:00:00.000Z');
const HOUR = 3_600_000;
const ago = (ms: number) => new Date(now.getTime() - ms);

/** The field errors parseSearchQuery throws for this query (fails the test when it does not). */
function errorsOf(query: Record<string, unknown>): Array<Pick<FieldError, 'path' | 'rule'>> {
  try {
    parseSearchQuery(query, now);
  } catch (error) {
    expect(error).toBeInstanceOf(ValidationError);
    return (error as ValidationError).fieldErrors.map(({ path, rule }) => ({ path, rule }));
  }
  throw new Error(`no error for ${JSON.stringify(query)}`);
}

/** What express's query parser (node:querystring, `+` as a space) makes of a query string. */
function decoded(queryString: string): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const [key, value] of new URLSearchParams(queryString)) {
    const seen = out[key];
    out[key] = seen === undefined ? value : [...(Array.isArray(seen) ? seen : [seen]), value];
  }
  return out;
}

describe('parseSearchQuery: defaults', () => {
  it('when the query is empty, then it asks for everything, newest first, 20 from the start', () => {
    expect(parseSearchQuery({}, now)).toEqual({
      q: '',
      contentTypes: ['frames', 'transcription'],
      order: 'newest',
      limit: limits.searchDefaultLimit,
      offset: 0,
    });
    expect(limits.searchDefaultLimit).toBe(20);
  });

  it('when a parameter is empty (app_name=), then it is as if absent', () => {
    expect(parseSearchQuery({ app_name: '', limit: '', start_time: '', q: '' }, now)).toEqual(
      parseSearchQuery({}, now),
    );
  });

  it('when unknown and ignored parameters are sent, repeated or not, then they change nothing', () => {
    const query = decoded(
      'timezone=Europe%2FParis&include_frames=false&speaker_ids=1,2&frame_name=x&browser_url=a&browser_url=b&focused=true&include_cloud=true&whatever=1',
    );
    expect(parseSearchQuery(query, now)).toEqual(parseSearchQuery({}, now));
  });
});

describe('parseSearchQuery: limit and offset', () => {
  it('when limit is over the cap, then it is capped (not refused), so paging by data.length still ends', () => {
    expect(limits.maxSearchLimit).toBe(1000);
    expect(parseSearchQuery({ limit: '5000' }, now).limit).toBe(1000);
    expect(parseSearchQuery({ limit: '1000' }, now).limit).toBe(1000);
    expect(parseSearchQuery({ limit: '9'.repeat(40) }, now).limit).toBe(1000);
    expect(parseSearchQuery({ limit: '7', offset: '40' }, now)).toMatchObject({
      limit: 7,
      offset: 40,
    });
  });

  it.each([
    [{ limit: '0' }, 'query.limit', 'minimum'],
    [{ limit: '-1' }, 'query.limit', 'type'],
    [{ limit: '2.5' }, 'query.limit', 'type'],
    [{ limit: 'ten' }, 'query.limit', 'type'],
    [{ limit: '1e3' }, 'query.limit', 'type'],
    [{ offset: '-5' }, 'query.offset', 'type'],
    [{ offset: String(limits.maxSearchInteger + 1) }, 'query.offset', 'maximum'],
    [{ min_length: 'x' }, 'query.min_length', 'type'],
    [{ max_length: '1.0' }, 'query.max_length', 'type'],
    [{ max_content_length: '0' }, 'query.max_content_length', 'minimum'],
  ])('when %j, then 400 names %s with rule %s', (query, path, rule) => {
    expect(errorsOf(query)).toEqual([{ path, rule }]);
  });

  it('when several parameters are bad, then each is named', () => {
    expect(errorsOf({ limit: 'x', offset: 'y', order: 'oldest' })).toEqual([
      { path: 'query.limit', rule: 'type' },
      { path: 'query.offset', rule: 'type' },
      { path: 'query.order', rule: 'enum' },
    ]);
  });

  it('when a known parameter is repeated, then 400 says to send it once', () => {
    expect(errorsOf(decoded('limit=5&limit=10'))).toEqual([
      { path: 'query.limit', rule: 'repeated' },
    ]);
    expect(errorsOf(decoded('device_name=a&device_name=b'))).toEqual([
      { path: 'query.device_name', rule: 'repeated' },
    ]);
  });

  it('when a value is not a string (an extended query parser made an object), then it is a type error', () => {
    expect(errorsOf({ app_name: { $ne: 'x' } })).toEqual([
      { path: 'query.app_name', rule: 'type' },
    ]);
  });
});

describe('parseSearchQuery: content_type', () => {
  it.each([
    ['all', ['frames', 'transcription']],
    ['ocr', ['frames']],
    ['vision', ['frames']],
    ['audio', ['transcription']],
    ['OCR', ['frames']],
    ['audio+ocr', ['frames', 'transcription']],
    ['ocr+audio', ['frames', 'transcription']],
    ['audio+ui', ['transcription']],
    ['ocr+ui', ['frames']],
    ['vision+input', ['frames']],
    ['audio+input', ['transcription']],
    ['vision+audio+input', ['frames', 'transcription']],
    ['all+ui', ['frames', 'transcription']],
  ])('when content_type=%s, then it selects %j', (value, types) => {
    expect(parseSearchQuery({ content_type: value }, now).contentTypes).toEqual(types);
  });

  it.each(['ui', 'accessibility', 'input', 'memory', 'ui+input'])(
    'when content_type=%s (a legacy type we never store), then it selects nothing: an empty answer, not a 400',
    (value) => {
      expect(parseSearchQuery({ content_type: value }, now).contentTypes).toEqual([]);
    },
  );

  it('when the + of audio+ocr arrives as a space (sent unencoded), then it is the same', () => {
    const unencoded = decoded('content_type=audio+ocr');
    expect(unencoded.content_type).toBe('audio ocr');
    expect(parseSearchQuery(unencoded, now).contentTypes).toEqual(['frames', 'transcription']);
    // URLSearchParams (screenpipe's SDKs) encodes it as %2B: a literal +.
    const encoded = decoded(new URLSearchParams({ content_type: 'audio+ocr' }).toString());
    expect(encoded.content_type).toBe('audio+ocr');
    expect(parseSearchQuery(encoded, now).contentTypes).toEqual(['frames', 'transcription']);
  });

  it.each(['fts', 'video', 'audio+pictures', '+', 'ocr,audio'])(
    'when content_type=%s, then 400 names content_type and lists the allowed values',
    (value) => {
      expect(errorsOf({ content_type: value })).toEqual([
        { path: 'query.content_type', rule: 'enum' },
      ]);
      expect(() => parseSearchQuery({ content_type: value }, now)).toThrow(
        /all, ocr, vision, audio, ui, accessibility, input, memory/,
      );
    },
  );
});

describe('parseSearchQuery: start_time and end_time', () => {
  it.each([
    ['2026-11-22T10:00:00Z', '2026-11-22T10:00:00.000Z'],
    ['2026-11-22T10:00:00.123456Z', '2026-11-22T10:00:00.123Z'],
    ['2026-11-22T18:00:00+08:00', '2026-11-22T10:00:00.000Z'],
    ['2026-11-22T05:30:00-04:30', '2026-11-22T10:00:00.000Z'],
    ['2026-11-22 10:00:00Z', '2026-11-22T10:00:00.000Z'],
    ['2026-11-22 10:00:00.5+00:00', '2026-11-22T10:00:00.500Z'],
    ['2026-11-22t10:00:00z', '2026-11-22T10:00:00.000Z'],
  ])('when start_time=%s, then it is %s', (value, iso) => {
    expect(parseSearchQuery({ start_time: value }, now).from?.toISOString()).toBe(iso);
  });

  it('when the + of an offset arrives as a space (sent unencoded), then it is read as +', () => {
    const query = decoded('end_time=2026-11-22T18:00:00+08:00');
    expect(query.end_time).toBe('2026-11-22T18:00:00 08:00');
    expect(parseSearchQuery(query, now).to?.toISOString()).toBe('2026-11-22T10:00:00.000Z');
  });

  it.each([
    ['now', now],
    ['NOW', now],
    ['16h ago', ago(16 * HOUR)],
    ['16h+ago', ago(16 * HOUR)],
    ['16 hours ago', ago(16 * HOUR)],
    ['2d', ago(48 * HOUR)],
    ['2 days ago', ago(48 * HOUR)],
    ['30m', ago(30 * 60_000)],
    ['30 minutes ago', ago(30 * 60_000)],
    ['1w', ago(7 * 24 * HOUR)],
    ['1 week ago', ago(7 * 24 * HOUR)],
    ['45s', ago(45_000)],
    ['0h', now],
  ])(
    'when a bound is the relative time "%s", then it is resolved against the clock',
    (value, at) => {
      expect(parseSearchQuery({ start_time: value }, now).from).toEqual(at);
      expect(parseSearchQuery({ end_time: value }, now).to).toEqual(at);
    },
  );

  it('when a relative time arrives with its space as + (unencoded), then it is the same', () => {
    expect(parseSearchQuery(decoded('start_time=16h+ago'), now).from).toEqual(ago(16 * HOUR));
  });

  it.each([
    '2026-11-22',
    '2026-11-22T10:00:00',
    '2026-11-22T10:00Z',
    '2026-02-30T10:00:00Z',
    '2026-11-22T24:00:00Z',
    'yesterday',
    '16 fortnights ago',
    '16h later',
    '-2d',
    '1700000000',
    '999999999w',
  ])('when start_time=%s, then 400 names start_time with rule format', (value) => {
    expect(errorsOf({ start_time: value })).toEqual([{ path: 'query.start_time', rule: 'format' }]);
    expect(errorsOf({ end_time: value })).toEqual([{ path: 'query.end_time', rule: 'format' }]);
  });

  it('when start_time is after end_time, then 400 names start_time; equal bounds are fine (inclusive)', () => {
    expect(errorsOf({ start_time: 'now', end_time: '1h ago' })).toEqual([
      { path: 'query.start_time', rule: 'range' },
    ]);
    const at = '2026-11-22T10:00:00Z';
    expect(parseSearchQuery({ start_time: at, end_time: at }, now)).toMatchObject({
      from: new Date(at),
      to: new Date(at),
    });
  });
});

describe('parseSearchQuery: filters', () => {
  it('when filters are given, then they come back as given', () => {
    expect(
      parseSearchQuery(
        {
          q: 'quarterly report',
          app_name: 'Chromium',
          window_name: 'Docs',
          device_name: 'MacBook Pro',
          min_length: '10',
          max_length: '500',
          max_content_length: '200',
          order: 'relevance',
        },
        now,
      ),
    ).toEqual({
      q: 'quarterly report',
      contentTypes: ['frames', 'transcription'],
      appName: 'Chromium',
      windowName: 'Docs',
      deviceName: 'MacBook Pro',
      minLength: 10,
      maxLength: 500,
      maxContentLength: 200,
      order: 'relevance',
      limit: 20,
      offset: 0,
    });
  });

  it.each([
    ['q too long', { q: 'x'.repeat(limits.maxSearchQueryLength + 1) }, 'query.q', 'maxLength'],
    ['app_name too long', { app_name: 'x'.repeat(1025) }, 'query.app_name', 'maxLength'],
    ['window_name too long', { window_name: 'x'.repeat(1025) }, 'query.window_name', 'maxLength'],
    ['device_name of 202 bytes', { device_name: 'é'.repeat(101) }, 'query.device_name', 'maxBytes'],
    [
      'device_name of 201 characters',
      { device_name: 'a'.repeat(201) },
      'query.device_name',
      'maxLength',
    ],
    ['device_name with a line break', { device_name: 'desk\n1' }, 'query.device_name', 'pattern'],
    ['order=oldest', { order: 'oldest' }, 'query.order', 'enum'],
    [
      'min_length over max_length',
      { min_length: '10', max_length: '5' },
      'query.min_length',
      'range',
    ],
  ])('when %s, then 400 names %s with rule %s', (_, query, path, rule) => {
    expect(errorsOf(query)).toEqual([{ path, rule }]);
  });

  it('when a bad value is refused, then the message names the parameter and the rule', () => {
    expect(() => parseSearchQuery({ limit: 'ten' }, now)).toThrow(
      'invalid search query: limit must be a whole number, got "ten"',
    );
  });
});
