import type { ContentItem } from './types';

/**
 * Sizes beyond the request limits: what the broker and the store can hold. The gateway refuses
 * a batch that could not be carried or stored, before it answers 200 (libs/contracts/README.md).
 */
export const sizeLimits = {
  /**
   * Largest message body the gateway publishes: under RabbitMQ 4's default max_message_size
   * (16 MiB; a larger message closes the publishing channel and fails every publish in flight),
   * with room for the AMQP frame and properties.
   */
  maxMessageBytes: 16 * 1024 * 1024 - 64 * 1024,
  /** A batch's items are split into messages of about this size (smaller bounds the worker's memory). */
  targetMessageBytes: 1024 * 1024,
  /** MongoDB's document limit (maxBsonObjectSize); the driver refuses a document of this size. */
  maxStoredDocumentBytes: 16 * 1024 * 1024 - 1,
} as const;

// BSON per stored document: field names, type bytes, lengths, _id, dates, nulls (about 270).
const DOCUMENT_OVERHEAD = 512;
// Per OCR result: its array key, the document and five named fields with lengths (about 87).
const OCR_RESULT_OVERHEAD = 96;
// Per tag: its array key, type byte, length and terminator (about 13).
const TAG_OVERHEAD = 16;

const bytes = (value: string | null | undefined) =>
  value == null ? 0 : Buffer.byteLength(value, 'utf8');

/**
 * An upper bound of the BSON size of the document the ingest worker stores for a frames item
 * (services/ingest-worker/src/domain/to-documents.ts): every string in UTF-8 plus a fixed
 * overhead per document, OCR result and tag. Linear in the item, no serialisation.
 */
export function storedItemBytesBound(deviceName: string, item: ContentItem): number {
  let total = DOCUMENT_OVERHEAD + bytes(deviceName) + bytes(item.file_path);
  total += bytes(item.app_name) + bytes(item.window_name);
  for (const result of item.ocr_results ?? []) {
    total += OCR_RESULT_OVERHEAD + bytes(result.text) + bytes(result.text_json);
    total += bytes(result.ocr_engine);
  }
  for (const tag of item.tags ?? []) total += TAG_OVERHEAD + bytes(tag);
  return total;
}
