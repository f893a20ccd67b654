import { validators, type SearchAnswer } from '@screenfleet/contracts';
import type { ContentDocument } from '@screenfleet/storage';
import { fitToBytes, toSearchAnswer, truncateMiddle } from './search-answer';

const LARGE = 16 * 1024 * 1024;

function frame(overrides: Partial<ContentDocument> = {}): ContentDocument {
  return {
    _id: '2t-frame',
    device_name: 'desk-1',
    content_type: 'frames',
    timestamp: new Date('2026-11-22T18:00:00.123+08:00'),
    timestamp_source: 'client',
    received_at: new Date('2026-11-22T10:00:01Z'),
    file_path: '/frames/a.mp4',
    app_name: 'Chromium',
    window_name: 'Docs',
    ocr_results: [
      { text: 'first line', confidence: 0.9, text_json: null, ocr_engine: null, focused: null },
      { text: 'second line', confidence: null, text_json: null, ocr_engine: null, focused: true },
    ],
    tags: ['work'],
    transcription: null,
    ...overrides,
  };
}

function transcription(overrides: Partial<ContentDocument> = {}): ContentDocument {
  return {
    _id: '2r-chunk',
    device_name: 'desk-1',
    content_type: 'transcription',
    timestamp: new Date('2026-11-22T09:00:00Z'),
    timestamp_source: 'received',
    received_at: new Date('2026-11-22T09:00:00Z'),
    file_path: null,
    app_name: null,
    window_name: null,
    ocr_results: [],
    tags: [],
    transcription: { text: 'good morning everyone', engine: 'whisper' },
    ...overrides,
  };
}

const page = { limit: 20, offset: 40 };

describe('toSearchAnswer', () => {
  it("when a frame is mapped, then every field of screenpipe's OCR content is there, null where unrecorded", () => {
    const answer = toSearchAnswer({ items: [frame()], total: 41 }, page, LARGE);
    expect(answer).toEqual({
      data: [
        {
          type: 'OCR',
          content: {
            frame_id: '2t-frame',
            text: 'first line\nsecond line',
            timestamp: '2026-11-22T10:00:00.123Z',
            file_path: '/frames/a.mp4',
            offset_index: null,
            app_name: 'Chromium',
            window_name: 'Docs',
            tags: ['work'],
            frame: null,
            frame_name: null,
            browser_url: null,
            focused: true,
            device_name: 'desk-1',
          },
        },
      ],
      pagination: { limit: 20, offset: 40, total: 41 },
    });
    expect(validators.searchAnswer.check(structuredClone(answer))).toEqual([]);
  });

  it('when a transcription is mapped, then it is Audio with its text and null where unrecorded', () => {
    const answer = toSearchAnswer({ items: [transcription()], total: 1 }, page, LARGE);
    expect(answer.data).toEqual([
      {
        type: 'Audio',
        content: {
          chunk_id: '2r-chunk',
          transcription: 'good morning everyone',
          timestamp: '2026-11-22T09:00:00.000Z',
          file_path: null,
          offset_index: null,
          tags: [],
          device_name: 'desk-1',
          device_type: null,
          speaker: null,
          start_time: null,
          end_time: null,
        },
      },
    ]);
    expect(validators.searchAnswer.check(structuredClone(answer))).toEqual([]);
  });

  it.each([
    ['no result marked', [null, null], null],
    ['one marked focused', [false, true], true],
    ['every marked one not focused', [false, null], false],
  ])('when %s, then focused is %s', (_, marks, focused) => {
    const ocr_results = marks.map((mark) => ({
      text: 'x',
      confidence: null,
      text_json: null,
      ocr_engine: null,
      focused: mark,
    }));
    const answer = toSearchAnswer({ items: [frame({ ocr_results })], total: 1 }, page, LARGE);
    expect(answer.data[0]?.content).toMatchObject({ focused });
  });

  it('when max_content_length is set, then longer texts are cut in the middle and shorter ones kept', () => {
    const long = transcription({ transcription: { text: 'abcdefghijklmnop', engine: null } });
    const short = transcription({ _id: 'short', transcription: { text: 'abc', engine: null } });
    const answer = toSearchAnswer(
      { items: [long, short], total: 2 },
      { ...page, max_content_length: 7 },
      LARGE,
    );
    expect(
      answer.data.map((item) => (item.content as { transcription: string }).transcription),
    ).toEqual(['abc…nop', 'abc']);
  });

  it('when the store ended the page early (its byte bound), then pagination.limit says how many it holds; a last page keeps the limit asked', () => {
    const items = [frame({ _id: 'a' }), frame({ _id: 'b' })];
    expect(
      toSearchAnswer({ items, total: 150 }, { limit: 1000, offset: 10 }, LARGE).pagination,
    ).toEqual({ limit: 2, offset: 10, total: 150 });
    expect(
      toSearchAnswer({ items, total: 12 }, { limit: 1000, offset: 10 }, LARGE).pagination,
    ).toEqual({ limit: 1000, offset: 10, total: 12 });
  });

  it('when the page holds nothing, then data is empty and the total still counts', () => {
    expect(toSearchAnswer({ items: [], total: 7 }, { limit: 5, offset: 10 }, LARGE)).toEqual({
      data: [],
      pagination: { limit: 5, offset: 10, total: 7 },
    });
  });
});

describe('truncateMiddle', () => {
  it.each([
    ['abcdefghij', 5, 'ab…ij'],
    ['abcdefghij', 6, 'abc…ij'],
    ['abcdefghij', 2, 'a…'],
    ['abcdefghij', 1, '…'],
    ['abcdefghij', 10, 'abcdefghij'],
    ['abcdefghij', 11, 'abcdefghij'],
    // Code points, not UTF-16 units: an emoji is never split in half.
    ['😀😀😀😀😀😀', 5, '😀😀…😀😀'],
    ['😀😀😀', 3, '😀😀😀'],
  ])('when %s is cut to %i, then it is %s', (text, max, expected) => {
    expect(truncateMiddle(text, max)).toBe(expected);
    expect(Array.from(truncateMiddle(text, max)).length).toBeLessThanOrEqual(max);
  });
});

describe('fitToBytes: a reply must fit one broker message', () => {
  const build =
    (total: number) =>
    (texts: string[]): SearchAnswer => ({
      data: texts.map((text, i) => ({
        type: 'Audio',
        content: {
          chunk_id: `c${i}`,
          transcription: text,
          timestamp: '2026-11-22T09:00:00.000Z',
          file_path: null,
          offset_index: null,
          tags: [],
          device_name: 'd',
          device_type: null,
          speaker: null,
          start_time: null,
          end_time: null,
        },
      })),
      pagination: { limit: texts.length, offset: 0, total },
    });
  const bytes = (answer: SearchAnswer) => Buffer.byteLength(JSON.stringify(answer));
  const textsOf = (answer: SearchAnswer) =>
    answer.data.map((item) => (item.content as { transcription: string }).transcription);

  it('when the answer fits, then it is returned as built', () => {
    const texts = ['short', 'texts'];
    expect(fitToBytes(texts, build(2), 10_000)).toEqual(build(2)(texts));
  });

  it('when it does not fit, then only the longest texts are cut, in the middle, until it does', () => {
    const texts = ['tiny', 'a'.repeat(50_000) + 'END', 'é'.repeat(30_000) + 'FIN', 'small text'];
    const answer = fitToBytes(texts, build(4), 20_000);
    expect(bytes(answer)).toBeLessThanOrEqual(20_000);
    expect(bytes(answer)).toBeGreaterThan(15_000); // the budget is used, not wasted
    const [tiny, long, accented, small] = textsOf(answer);
    expect([tiny, small]).toEqual(['tiny', 'small text']);
    expect(long).toMatch(/^a+…a*END$/);
    expect(accented).toMatch(/^é+…é*FIN$/);
    expect(answer.data).toHaveLength(4);
  });

  it('when texts are mostly escapes (quotes, control characters), then the cut still fits', () => {
    const texts = Array.from({ length: 20 }, () => '"\u0001'.repeat(10_000));
    const answer = fitToBytes(texts, build(20), 50_000);
    expect(bytes(answer)).toBeLessThanOrEqual(50_000);
    expect(answer.data).toHaveLength(20);
  });

  it('when even empty texts would not fit, then results are dropped from the end and pagination.limit says how many came', () => {
    const texts = Array.from({ length: 100 }, () => 'x'.repeat(1000));
    const answer = fitToBytes(texts, build(100), 3_000);
    expect(bytes(answer)).toBeLessThanOrEqual(3_000);
    expect(answer.data.length).toBeGreaterThan(0);
    expect(answer.data.length).toBeLessThan(100);
    expect(answer.pagination).toEqual({ limit: answer.data.length, offset: 0, total: 100 });
  });
});
