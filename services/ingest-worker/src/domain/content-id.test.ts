import { contentId } from './content-id';

// Stored ids must not change within a version: a re-sent batch would be stored twice.
describe('contentId, version 2', () => {
  it('when items of each form are identified, then their ids are the ones version 2 always gave', () => {
    expect([
      contentId({
        device: 'desk-1',
        content_type: 'frames',
        item: { file_path: 'a', timestamp: '2026-11-22T18:00:00.1234+08:00' },
      }),
      contentId({
        device: 'desk-1',
        content_type: 'frames',
        item: { file_path: 'b', ocr_results: [{ text: 'x' }, { text: 'y' }] },
      }),
      contentId({
        device: 'mic',
        content_type: 'transcription',
        item: { transcription: 'yes', transcription_engine: 'whisper' },
        received_at: '2026-11-22T12:00:00.000Z',
      }),
    ]).toEqual([
      '2t-JOX6ry322KmhVLfklc729aXo6iBofxmvnoY1FPOirpk',
      '2c-TZttsDi3AdTO7ZSWwcXOrEOhKG8l75WtBXR51PTrpzo',
      '2r-NVqq76m8Nu9Y9MbjJKUe3p2L0N5eS8A6m6uDDyOwx-c',
    ]);
  });
});
