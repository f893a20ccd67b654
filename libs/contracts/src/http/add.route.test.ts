import { limits, validators, type AddRequest, type FieldError } from '../index';

const item = (overrides: Record<string, unknown> = {}) => ({
  file_path: '/captures/2026-11-22/frame-0001.png',
  timestamp: '2026-11-22T10:15:30Z',
  app_name: 'Code',
  window_name: 'main.ts - screenfleet',
  ocr_results: [{ text: 'function main() {', confidence: 0.93 }],
  tags: ['work', 'editor'],
  ...overrides,
});

const body = (data: unknown, extra: Record<string, unknown> = {}) => ({
  device_name: 'MacBook Pro',
  content: { content_type: 'frames', data },
  ...extra,
});

const errorsOf = (data: unknown): Array<Pick<FieldError, 'path' | 'rule'>> =>
  validators.addRequest.check(data).map(({ path, rule }) => ({ path, rule }));

describe('add request contract', () => {
  it.each([
    ['the spec example: every field of every table', body([item()])],
    ['an empty batch', body([])],
    ['only file_path, as screenpipe always sends', body([{ file_path: 'a.png' }])],
    [
      'generated clients: explicit null for every optional field',
      body([
        {
          file_path: 'a.png',
          timestamp: null,
          app_name: null,
          window_name: null,
          ocr_results: null,
          tags: null,
        },
      ]),
    ],
    [
      'OCR results with text_json, ocr_engine, focused and no confidence',
      body([
        item({
          ocr_results: [{ text: 'x', text_json: '[]', ocr_engine: 'apple-native', focused: true }],
        }),
      ]),
    ],
    ['timestamps with 3 fraction digits', body([item({ timestamp: '2026-11-22T10:15:30.123Z' })])],
    [
      'timestamps with 6 fraction digits',
      body([item({ timestamp: '2026-11-22T10:15:30.123456Z' })]),
    ],
    ['timestamps with +00:00', body([item({ timestamp: '2026-11-22T10:15:30+00:00' })])],
    ['timestamps with a local offset', body([item({ timestamp: '2026-11-22T18:15:30.5+08:00' })])],
    ['a leap day', body([item({ timestamp: '2028-02-29T00:00:00Z' })])],
    [
      'a batch of 45 items',
      body(Array.from({ length: 45 }, (_, i) => item({ file_path: `f${i}.png` }))),
    ],
    ['the largest batch', body(Array.from({ length: limits.maxItemsPerBatch }, () => item()))],
    [
      'a transcription',
      {
        device_name: 'MacBook Pro Microphone',
        content: {
          content_type: 'transcription',
          data: { transcription: 'hello', transcription_engine: 'whisper' },
        },
      },
    ],
    [
      'confidence at the bounds',
      body([
        item({
          ocr_results: [
            { text: 'a', confidence: 0 },
            { text: 'b', confidence: 1 },
          ],
        }),
      ]),
    ],
  ])('when the body is %s, then it is accepted', (_, request) => {
    expect(validators.addRequest.check(request)).toEqual([]);
  });

  it('when unknown fields are sent, then they are dropped and the rest kept', () => {
    const request = body([item({ extra: 1, ocr_results: [{ text: 'a', left: 3 }] })], {
      client: 'x',
    });
    const parsed = validators.addRequest.parse(request);

    expect(parsed).not.toHaveProperty('client');
    expect(parsed.content.data).toEqual([{ ...item(), ocr_results: [{ text: 'a' }] }]);
  });

  it('when the body carries __proto__ keys, then they are removed before use', () => {
    const request = JSON.parse(
      '{"device_name":"d","__proto__":{"polluted":true},"content":{"content_type":"frames","data":[{"file_path":"a","__proto__":{"x":1}}]}}',
    ) as unknown;
    const parsed: AddRequest = validators.addRequest.parse(request);

    expect(Object.keys(parsed)).toEqual(['device_name', 'content']);
    expect(Object.prototype.hasOwnProperty.call(parsed.content.data, '__proto__')).toBe(false);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it.each<[string, unknown, Array<Pick<FieldError, 'path' | 'rule'>>]>([
    ['not an object', [], [{ path: '', rule: 'type' }]],
    [
      'no device_name',
      { content: { content_type: 'frames', data: [] } },
      [{ path: 'device_name', rule: 'required' }],
    ],
    [
      'an empty device_name',
      body([], { device_name: '' }),
      [{ path: 'device_name', rule: 'minLength' }],
    ],
    [
      'a device_name with a newline',
      body([], { device_name: 'a\nb' }),
      [{ path: 'device_name', rule: 'pattern' }],
    ],
    [
      'a numeric device_name',
      body([], { device_name: 7 }),
      [{ path: 'device_name', rule: 'type' }],
    ],
    ['no content', { device_name: 'd' }, [{ path: 'content', rule: 'required' }]],
    [
      'no content_type',
      { device_name: 'd', content: { data: [] } },
      [{ path: 'content.content_type', rule: 'required' }],
    ],
    [
      'an unknown content_type',
      { device_name: 'd', content: { content_type: 'video', data: [] } },
      [{ path: 'content.content_type', rule: 'enum' }],
    ],
    [
      'no data',
      { device_name: 'd', content: { content_type: 'frames' } },
      [{ path: 'content.data', rule: 'required' }],
    ],
    [
      'data as {frames: [...]} (an old docs example)',
      body({ frames: [item()] }),
      [{ path: 'content.data', rule: 'type' }],
    ],
    [
      'camelCase filePath',
      body([{ filePath: 'a.png' }]),
      [{ path: 'content.data[0].file_path', rule: 'required' }],
    ],
    [
      'an empty file_path',
      body([item({ file_path: '' })]),
      [{ path: 'content.data[0].file_path', rule: 'minLength' }],
    ],
    [
      'a date without a time',
      body([item({ timestamp: '2026-11-22' })]),
      [{ path: 'content.data[0].timestamp', rule: 'format' }],
    ],
    [
      'a time without an offset',
      body([item({ timestamp: '2026-11-22T10:15:30' })]),
      [{ path: 'content.data[0].timestamp', rule: 'format' }],
    ],
    [
      'an impossible date',
      body([item({ timestamp: '2026-02-30T10:00:00Z' })]),
      [{ path: 'content.data[0].timestamp', rule: 'format' }],
    ],
    [
      'hour 24',
      body([item({ timestamp: '2026-11-22T24:00:00Z' })]),
      [{ path: 'content.data[0].timestamp', rule: 'format' }],
    ],
    [
      'a numeric timestamp',
      body([item({ timestamp: 1763800000 })]),
      [{ path: 'content.data[0].timestamp', rule: 'type' }],
    ],
    [
      'a too long file_path',
      body([item({ file_path: 'x'.repeat(limits.maxFilePathLength + 1) })]),
      [{ path: 'content.data[0].file_path', rule: 'maxLength' }],
    ],
    [
      'a tag that is a number',
      body([item({ tags: ['ok', 3] })]),
      [{ path: 'content.data[0].tags[1]', rule: 'type' }],
    ],
    [
      'too many tags',
      body([item({ tags: Array.from({ length: limits.maxTags + 1 }, (_, i) => `t${i}`) })]),
      [{ path: 'content.data[0].tags', rule: 'maxItems' }],
    ],
    [
      'an OCR result without text',
      body([item({ ocr_results: [{ confidence: 0.5 }] })]),
      [{ path: 'content.data[0].ocr_results[0].text', rule: 'required' }],
    ],
    [
      'confidence above 1',
      body([item({ ocr_results: [{ text: 'a', confidence: 87 }] })]),
      [{ path: 'content.data[0].ocr_results[0].confidence', rule: 'maximum' }],
    ],
    [
      'confidence as a string',
      body([item({ ocr_results: [{ text: 'a', confidence: 'high' }] })]),
      [{ path: 'content.data[0].ocr_results[0].confidence', rule: 'type' }],
    ],
    [
      'too many items',
      body(Array.from({ length: limits.maxItemsPerBatch + 1 }, () => item())),
      [{ path: 'content.data', rule: 'maxItems' }],
    ],
    [
      'a transcription given as a list',
      { device_name: 'd', content: { content_type: 'transcription', data: [] } },
      [{ path: 'content.data', rule: 'type' }],
    ],
    [
      'a transcription without text',
      { device_name: 'd', content: { content_type: 'transcription', data: {} } },
      [{ path: 'content.data.transcription', rule: 'required' }],
    ],
  ])(
    'when the body has %s, then it is refused naming the field and rule',
    (_, request, expected) => {
      expect(errorsOf(request)).toEqual(expected);
    },
  );

  it('when a field is refused, then the detail is a sentence naming it', () => {
    const [error] = validators.addRequest.check(body([{ filePath: 'a.png' }]));
    expect(error?.detail).toBe('content.data[0].file_path is required');
    expect(() => validators.addRequest.parse({})).toThrow(
      'invalid add request: device_name is required (and 1 more)',
    );
  });

  it('when many items fail, then the report is bounded', () => {
    const errors = validators.addRequest.check(body(Array.from({ length: 500 }, () => ({}))));
    expect(errors).toHaveLength(50);
  });
});
