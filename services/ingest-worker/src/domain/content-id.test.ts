import { contentIdentity, TRANSCRIPTION_RETRY_WINDOW_MS } from './content-id';

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
