import {
  parseDateTime,
  type ContentBatch,
  type ContentItem,
  type OcrResult,
} from '@screenfleet/contracts';
import type { ContentDocument, NewContentDocument } from '@screenfleet/storage';
import { contentIdentity } from './content-id';

/** One stored document per item of an accepted batch; absent values become null or []. */
export function toDocuments(batch: ContentBatch): NewContentDocument[] {
  const { request } = batch;
  const receivedAt = parseDateTime(batch.received_at);
  const device = request.device_name;
  const { content } = request;
  if (content.content_type === 'transcription') {
    const { transcription, transcription_engine, timestamp } = content.data;
    const { id, claims } = contentIdentity({
      device,
      content_type: 'transcription',
      item: content.data,
      received_at: batch.received_at,
    });
    return [
      {
        _id: id,
        ...(claims.length > 0 ? { claims } : {}),
        device_name: device,
        content_type: 'transcription',
        timestamp: timestamp ? parseDateTime(timestamp) : receivedAt,
        timestamp_source: timestamp ? 'client' : 'received',
        received_at: receivedAt,
        file_path: null,
        app_name: null,
        window_name: null,
        ocr_results: [],
        tags: [],
        transcription: { text: transcription, engine: transcription_engine ?? null },
      },
    ];
  }
  return content.data.map((item) => frameDocument(device, item, receivedAt));
}

function frameDocument(device: string, item: ContentItem, receivedAt: Date): ContentDocument {
  const ocrResults = (item.ocr_results ?? []).map(toOcr);
  const timestamp = item.timestamp ? parseDateTime(item.timestamp) : undefined;
  return {
    _id: contentIdentity({ device, content_type: 'frames', item }).id,
    device_name: device,
    content_type: 'frames',
    timestamp: timestamp ?? receivedAt,
    timestamp_source: timestamp ? 'client' : 'received',
    received_at: receivedAt,
    file_path: item.file_path,
    app_name: item.app_name ?? null,
    window_name: item.window_name ?? null,
    ocr_results: ocrResults,
    tags: item.tags ?? [],
    transcription: null,
  };
}

function toOcr(result: OcrResult): ContentDocument['ocr_results'][number] {
  return {
    text: result.text,
    confidence: result.confidence ?? null,
    text_json: result.text_json ?? null,
    ocr_engine: result.ocr_engine ?? null,
    focused: result.focused ?? null,
  };
}
