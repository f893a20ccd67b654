import { addRequestSchema, limits, validators } from './index';
import { exceedsCodePoints, pruneForReport, shapeErrors, utf8Length } from './json-shape';

const frames = (data: unknown) => ({
  device_name: 'desk-1',
  content: { content_type: 'frames', data },
});
const ocrItems = (count: number, ocr: () => unknown) =>
  Array.from({ length: count }, (_, i) => ({
    file_path: `/f/${i}.png`,
    ocr_results: Array.from({ length: count }, ocr),
  }));

describe('the shape pre-check', () => {
  it('when content.data holds 8 million zeros, then it says maxItems once, for content.data, without entering it', () => {
    const zeros = new Array<number>(8_000_000).fill(0);
    expect(shapeErrors(addRequestSchema, frames(zeros), 50)).toEqual([
      {
        path: 'content.data',
        rule: 'maxItems',
        detail: `content.data must NOT have more than ${limits.maxItemsPerBatch} items`,
      },
    ]);
  });

  it('when the same body goes through the validator, then that one error is the answer', () => {
    const zeros = new Array<number>(8_000_000).fill(0);
    expect(validators.addRequest.check(frames(zeros))).toEqual([
      expect.objectContaining({ path: 'content.data', rule: 'maxItems' }),
    ]);
  });

  it('when a nested string is over its maxLength, then the error names its full path', () => {
    const body = frames([
      { file_path: 'ok' },
      { file_path: 'x'.repeat(limits.maxFilePathLength + 1) },
    ]);
    expect(shapeErrors(addRequestSchema, body, 50)).toEqual([
      {
        path: 'content.data[1].file_path',
        rule: 'maxLength',
        detail: `content.data[1].file_path must NOT have more than ${limits.maxFilePathLength} characters`,
      },
    ]);
  });

  it('when a transcription is over its limit, then the discriminated branch is followed', () => {
    const body = {
      device_name: 'd',
      content: {
        content_type: 'transcription',
        data: { transcription: 'a'.repeat(limits.maxTextLength + 1) },
      },
    };
    expect(
      shapeErrors(addRequestSchema, body, 50).map(({ path, rule }) => ({ path, rule })),
    ).toEqual([{ path: 'content.data.transcription', rule: 'maxLength' }]);
  });

  it('when more than the limit of fields are over-long, then at most that many are reported', () => {
    const body = frames(
      Array.from({ length: 1000 }, () => ({ file_path: 'x'.repeat(limits.maxFilePathLength + 1) })),
    );
    expect(shapeErrors(addRequestSchema, body, 50)).toHaveLength(50);
  });

  it('when the sizes are within the limits, then it reports nothing (ajv decides the rest)', () => {
    expect(shapeErrors(addRequestSchema, frames([{ file_path: 7 }]), 50)).toEqual([]);
  });

  it.each([
    ['ASCII at the limit', 'a'.repeat(10), 10, false],
    ['ASCII over', 'a'.repeat(11), 10, true],
    ['10 emoji (20 UTF-16 units) at a limit of 10 code points', '😀'.repeat(10), 10, false],
    ['11 emoji', '😀'.repeat(11), 10, true],
  ])('counts code points as ajv does: %s', (_, text, max, expected) => {
    expect(exceedsCodePoints(text, max)).toBe(expected);
  });

  it.each(['a', 'é', '€', '😀', 'a😀é', '\ud800', 'x\udc00y'])(
    'counts UTF-8 bytes as Buffer does: %s',
    (text) => {
      expect(utf8Length(text)).toBe(Buffer.byteLength(text, 'utf8'));
    },
  );
});

describe('bounded error reports', () => {
  it('when a million OCR results are each invalid, then 50 errors are reported, the first ones, in order', () => {
    const body = frames(ocrItems(1000, () => ({ text: 'x', confidence: 2 })));
    const errors = validators.addRequest.check(body);

    expect(errors).toHaveLength(50);
    expect(errors[0]).toEqual({
      path: 'content.data[0].ocr_results[0].confidence',
      rule: 'maximum',
      detail: 'content.data[0].ocr_results[0].confidence must be <= 1',
    });
    expect(errors[49]?.path).toBe('content.data[0].ocr_results[49].confidence');
  });

  it('when only the last item is invalid, then its errors are found, with their true index', () => {
    const data = ocrItems(100, () => ({ text: 'x' }));
    data[99] = { file_path: '/f/99.png', ocr_results: [{ text: 'x' }, { text: 5 }] };
    expect(validators.addRequest.check(frames(data))).toEqual([
      expect.objectContaining({ path: 'content.data[99].ocr_results[1].text', rule: 'type' }),
    ]);
  });

  it('when pruning for the report, then each array is cut after its budget of invalid elements, and valid bodies are untouched', () => {
    const isValid = (_: unknown, data: unknown) => data === 'ok';
    const schema = { type: 'array', items: { type: 'string' } };

    expect(pruneForReport(schema, ['ok', 'bad', 'ok', 'bad', 'bad', 'ok'], isValid, 2)).toEqual([
      'ok',
      'bad',
      'ok',
      'bad',
    ]);
    expect(pruneForReport(schema, ['ok', 'ok'], isValid, 2)).toEqual(['ok', 'ok']);
  });
});
