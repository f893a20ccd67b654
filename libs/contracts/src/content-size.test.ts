import { BSON } from 'mongodb';
import { sizeLimits } from './content-size';
import { storedItemBytesBound, type ContentItem } from './http/add.route';

// The stored shape, as the ingest worker builds it (to-documents.ts), serialised by real BSON.
function storedBytes(device: string, item: ContentItem): number {
  return BSON.calculateObjectSize({
    _id: `2t-${'x'.repeat(43)}`,
    device_name: device,
    content_type: 'frames',
    timestamp: new Date(),
    timestamp_source: 'client',
    received_at: new Date(),
    file_path: item.file_path,
    app_name: item.app_name ?? null,
    window_name: item.window_name ?? null,
    ocr_results: (item.ocr_results ?? []).map((r) => ({
      text: r.text,
      confidence: r.confidence ?? null,
      text_json: r.text_json ?? null,
      ocr_engine: r.ocr_engine ?? null,
      focused: r.focused ?? null,
    })),
    tags: item.tags ?? [],
    transcription: null,
  });
}

describe('storedItemBytesBound', () => {
  it.each<[string, ContentItem]>([
    ['a bare item', { file_path: 'a.png' }],
    [
      'many small OCR results with every field',
      {
        file_path: '/x/'.repeat(100),
        app_name: 'Code',
        window_name: 'é'.repeat(500),
        ocr_results: Array.from({ length: 1000 }, (_, i) => ({
          text: String(i),
          confidence: 0.5,
          text_json: '[]',
          ocr_engine: 'tesseract',
          focused: true,
        })),
        tags: Array.from({ length: 100 }, (_, i) => `t${i}`),
      },
    ],
    [
      'one large multi-byte text',
      { file_path: 'a', ocr_results: [{ text: '日本'.repeat(100_000) }] },
    ],
  ])('when the item is %s, then the bound is at least the real BSON size', (_name, item) => {
    expect(storedItemBytesBound('desk-1', item)).toBeGreaterThanOrEqual(
      storedBytes('desk-1', item),
    );
  });

  it('when an item carries more text than a document holds, then its bound passes the store limit', () => {
    const item = { file_path: 'a', ocr_results: [{ text: 'x'.repeat(16 * 1024 * 1024) }] };
    expect(storedItemBytesBound('d', item)).toBeGreaterThan(sizeLimits.maxStoredDocumentBytes);
  });
});
