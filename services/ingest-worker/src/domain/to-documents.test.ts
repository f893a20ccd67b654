import type { ContentBatch } from '@screenfleet/contracts';
import { contentIdentity, toDocuments, TRANSCRIPTION_RETRY_WINDOW_MS } from './to-documents';

const batch = (data: unknown, overrides: Partial<ContentBatch> = {}): ContentBatch =>
  ({
    received_at: '2026-11-22T12:00:00.000Z',
    request: { device_name: 'desk-1', content: { content_type: 'frames', data } },
    ...overrides,
  }) as ContentBatch;

describe('toDocuments', () => {
  it('when an item has every field, then the document keeps them with the timestamp in UTC', () => {
    const [doc] = toDocuments(
      batch([
        {
          file_path: '/f/1.png',
          timestamp: '2026-11-22T18:15:30.250+08:00',
          app_name: 'Code',
          window_name: 'main.ts',
          ocr_results: [{ text: 'hello', confidence: 0.9, ocr_engine: 'tesseract' }],
          tags: ['a'],
        },
      ]),
    );

    expect(doc).toEqual({
      _id: expect.any(String),
      device_name: 'desk-1',
      content_type: 'frames',
      timestamp: new Date('2026-11-22T10:15:30.250Z'),
      timestamp_source: 'client',
      received_at: new Date('2026-11-22T12:00:00.000Z'),
      file_path: '/f/1.png',
      app_name: 'Code',
      window_name: 'main.ts',
      ocr_results: [
        { text: 'hello', confidence: 0.9, text_json: null, ocr_engine: 'tesseract', focused: null },
      ],
      tags: ['a'],
      transcription: null,
    });
  });

  it('when an item has no timestamp, then it gets the receipt time and nulls become defaults', () => {
    const [doc] = toDocuments(
      batch([{ file_path: 'a.png', timestamp: null, tags: null, ocr_results: null }]),
    );
    expect(doc).toMatchObject({
      timestamp: new Date('2026-11-22T12:00:00.000Z'),
      timestamp_source: 'received',
      app_name: null,
      ocr_results: [],
      tags: [],
    });
  });

  it('when the same item arrives again, also as a client retry received later, then its _id is the same', () => {
    const timed = { file_path: 'a.png', timestamp: '2026-11-22T10:00:00Z' };
    const untimed = { file_path: 'b.png', ocr_results: [{ text: 'x' }] };
    const first = toDocuments(batch([timed, untimed]));
    const retry = toDocuments(batch([timed, untimed], { received_at: '2026-11-22T12:05:00.000Z' }));

    expect(retry.map((d) => d._id)).toEqual(first.map((d) => d._id));
  });

  it('when items differ in device, path, time or (untimed) text, then their _ids differ', () => {
    const ids = [
      toDocuments(batch([{ file_path: 'a', timestamp: '2026-11-22T10:00:00Z' }])),
      toDocuments(batch([{ file_path: 'a', timestamp: '2026-11-22T10:00:01Z' }])),
      toDocuments(batch([{ file_path: 'b', timestamp: '2026-11-22T10:00:00Z' }])),
      toDocuments({
        ...batch([]),
        request: {
          device_name: 'desk-2',
          content: {
            content_type: 'frames',
            data: [{ file_path: 'a', timestamp: '2026-11-22T10:00:00Z' }],
          },
        },
      }),
      toDocuments(batch([{ file_path: 'a', ocr_results: [{ text: 'x' }] }])),
      toDocuments(batch([{ file_path: 'a', ocr_results: [{ text: 'y' }] }])),
    ].map(([doc]) => doc?._id);

    expect(new Set(ids).size).toBe(ids.length);
  });

  it('when the same instant is written with another offset, then the _id is the same', () => {
    const [utc] = toDocuments(batch([{ file_path: 'a', timestamp: '2026-11-22T10:00:00Z' }]));
    const [local] = toDocuments(
      batch([{ file_path: 'a', timestamp: '2026-11-22T18:00:00+08:00' }]),
    );
    expect(local?._id).toBe(utc?._id);
  });

  it('when two timestamps differ only past the millisecond, then the items get different _ids', () => {
    const docs = toDocuments(
      batch([
        { file_path: 'a', timestamp: '2026-11-22T10:00:00.1234Z' },
        { file_path: 'a', timestamp: '2026-11-22T10:00:00.1235Z' },
        { file_path: 'a', timestamp: '2026-11-22T10:00:00.123456789Z' },
        { file_path: 'a', timestamp: '2026-11-22T10:00:00.123456788Z' },
      ]),
    );
    expect(new Set(docs.map((d) => d._id)).size).toBe(4);
  });

  it('when the same instant is sent with more trailing zeros or another offset, then the _id is the same', () => {
    const ids = [
      '2026-11-22T10:00:00.1234Z',
      '2026-11-22T10:00:00.123400Z',
      '2026-11-22T18:00:00.1234+08:00',
    ].map((timestamp) => toDocuments(batch([{ file_path: 'a', timestamp }]))[0]?._id);
    expect(new Set(ids).size).toBe(1);
  });

  it('when ids are made, then each carries the tag of its form (client time, content, spoken time, retry window)', () => {
    const [timed, untimed] = toDocuments(
      batch([{ file_path: 'a', timestamp: '2026-11-22T10:00:00Z' }, { file_path: 'a' }]),
    );
    const spoken = (data: { transcription: string; timestamp?: string }) =>
      toDocuments({
        received_at: '2026-11-22T12:00:00.000Z',
        request: { device_name: 'desk-1', content: { content_type: 'transcription', data } },
      })[0];
    const dated = spoken({ transcription: 'a', timestamp: '2026-11-22T11:59:30Z' });
    const undated = spoken({ transcription: 'a' });

    expect(timed?._id).toMatch(/^2t-[\w-]{43}$/);
    expect(untimed?._id).toMatch(/^2c-[\w-]{43}$/);
    expect(dated).toMatchObject({ _id: expect.stringMatching(/^2u-[\w-]{43}$/) });
    expect(dated).not.toHaveProperty('claims');
    expect(undated).toMatchObject({
      _id: expect.stringMatching(/^2w-[\w-]{43}$/),
      claims: [expect.stringMatching(/^2w-[\w-]{43}$/)],
    });
  });

  it('when a transcription carries a timestamp, then that is its time', () => {
    const [doc] = toDocuments({
      received_at: '2026-11-22T12:00:00.000Z',
      request: {
        device_name: 'mic',
        content: {
          content_type: 'transcription',
          data: { transcription: 'hi', timestamp: '2026-11-22T13:59:30+02:00' },
        },
      },
    });
    expect(doc).toMatchObject({
      timestamp: new Date('2026-11-22T11:59:30Z'),
      timestamp_source: 'client',
    });
  });

  it('when a transcription arrives, then one document carries its text at the receipt time', () => {
    const docs = toDocuments({
      received_at: '2026-11-22T12:00:00.000Z',
      request: {
        device_name: 'mic',
        content: { content_type: 'transcription', data: { transcription: 'hello there' } },
      },
    });
    expect(docs).toEqual([
      expect.objectContaining({
        content_type: 'transcription',
        timestamp: new Date('2026-11-22T12:00:00.000Z'),
        transcription: { text: 'hello there', engine: null },
        file_path: null,
      }),
    ]);
  });
});

// Stored ids must not change within a version: a re-sent batch would be stored twice.
describe('contentIdentity, version 2', () => {
  it('when items of each form are identified, then their ids are the ones version 2 always gave', () => {
    expect([
      contentIdentity({
        device: 'desk-1',
        content_type: 'frames',
        item: { file_path: 'a', timestamp: '2026-11-22T18:00:00.1234+08:00' },
      }),
      contentIdentity({
        device: 'desk-1',
        content_type: 'frames',
        item: { file_path: 'b', ocr_results: [{ text: 'x' }, { text: 'y' }] },
      }),
    ]).toEqual([
      { id: '2t-JOX6ry322KmhVLfklc729aXo6iBofxmvnoY1FPOirpk', claims: [] },
      { id: '2c-TZttsDi3AdTO7ZSWwcXOrEOhKG8l75WtBXR51PTrpzo', claims: [] },
    ]);
  });
});

describe('contentIdentity of a transcription (docs/adr/0009)', () => {
  const spoken = (receivedAt: string, timestamp?: string) =>
    contentIdentity({
      device: 'mic',
      content_type: 'transcription',
      item: { transcription: 'yes', transcription_engine: 'whisper', timestamp },
      received_at: receivedAt,
    });
  const window = TRANSCRIPTION_RETRY_WINDOW_MS;
  const at = (ms: number) => new Date(ms).toISOString();
  const slotStart = Math.ceil(Date.parse('2026-11-22T12:00:00Z') / window) * window;

  it('when it carries a timestamp, then its id is that utterance: the receipt time does not matter, another time is another item', () => {
    const first = spoken(at(slotStart), '2026-11-22T11:59:58.5Z');
    const retry = spoken(at(slotStart + 3 * window), '2026-11-22T11:59:58.5Z');
    const again = spoken(at(slotStart), '2026-11-22T12:01:00Z');

    expect(first).toEqual({ id: expect.stringMatching(/^2u-/), claims: [] });
    expect(retry).toEqual(first);
    expect(again.id).not.toBe(first.id);
  });

  it('when it carries none, then a retry in the same window has its id and one in the next window an id it claims', () => {
    const first = spoken(at(slotStart + window - 1));
    const sameWindow = spoken(at(slotStart));
    const nextWindow = spoken(at(slotStart + window));

    expect(first.id).toMatch(/^2w-/);
    expect(sameWindow).toEqual(first);
    expect(first.claims).toEqual([nextWindow.id]);
  });

  it('when the same words come two windows apart or more, then they are two items that claim nothing of each other', () => {
    const first = spoken(at(slotStart));
    const later = spoken(at(slotStart + 2 * window));

    expect([later.id, ...later.claims]).not.toContain(first.id);
    expect(first.claims).not.toContain(later.id);
  });
});
