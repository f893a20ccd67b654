import { createHash } from 'node:crypto';
import {
  canonicalDateTime,
  parseDateTime,
  type ContentBatch,
  type ContentItem,
  type OcrResult,
  type Transcription,
} from '@screenfleet/contracts';
import type { ContentDocument, NewContentDocument } from '@screenfleet/storage';

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

/** Version of the derivation: ids stored before it (untagged, 43 characters) are version 1. */
export const CONTENT_ID_VERSION = 2;

/**
 * A transcription without a timestamp is taken as a retry of one with the same device, engine
 * and text received less than this long before it (docs/adr/0009).
 */
export const TRANSCRIPTION_RETRY_WINDOW_MS = 5 * 60_000;

/** An item as its id sees it: the batch's device (and receipt time), and what the item carries. */
export type IdSource =
  | { device: string; content_type: 'frames'; item: ContentItem }
  | { device: string; content_type: 'transcription'; item: Transcription; received_at: string };

/** The item's id, and the further ids it claims (see the `w` form). */
export interface ContentIdentity {
  id: string;
  claims: string[];
}

/**
 * Deterministic _id of a content item, so a redelivered message or a re-sent batch never stores
 * an item twice (ARCHITECTURE.md "Storage"): `<version><form>-<sha256 base64url>`, e.g. `2t-...`.
 * Each form is a tag of its own in the _id, so ids of different forms can never collide and a
 * reader can tell them apart:
 * - `t`: an item with a client timestamp: (device, content type, file path, timestamp in UTC
 *   with every fraction digit sent: `.1234Z` and `.1235Z` are different items);
 * - `c`: an item without one gets the receipt time, which a client's retry would change, so its
 *   id comes from what it carries: (device, content type, file path, OCR texts);
 * - `u`: a transcription with the client's timestamp: (device, engine, text, timestamp);
 * - `w`: a transcription without one carries neither a path nor a time. The text alone would
 *   merge two real utterances of the same words ("yes", "ok"); the receipt time alone would
 *   make a client's retry a second item. So its id is the text within a retry window: (device,
 *   engine, text, the TRANSCRIPTION_RETRY_WINDOW_MS slot of the receipt time), and it also
 *   claims the next slot's id. A retry received up to one window later falls in the same slot
 *   (same id) or the next (an id already claimed), so it is "already stored"; the same words
 *   two windows apart or more are two items (docs/adr/0009). Version-2 `r` ids (receipt time
 *   alone) are no longer made.
 */
export function contentIdentity(source: IdSource): ContentIdentity {
  const { device } = source;
  if (source.content_type === 'frames') {
    const { file_path, timestamp, ocr_results } = source.item;
    const id = timestamp
      ? hashed('t', [device, 'frames', file_path, canonicalDateTime(timestamp)])
      : hashed('c', [device, 'frames', file_path, ...(ocr_results ?? []).map((r) => r.text)]);
    return { id, claims: [] };
  }
  const { transcription, transcription_engine, timestamp } = source.item;
  const spoken = [device, 'transcription', transcription_engine ?? null, transcription];
  if (timestamp) return { id: hashed('u', [...spoken, canonicalDateTime(timestamp)]), claims: [] };
  const slot = Math.floor(Date.parse(source.received_at) / TRANSCRIPTION_RETRY_WINDOW_MS);
  const inSlot = (n: number) => hashed('w', [...spoken, String(n)]);
  return { id: inSlot(slot), claims: [inSlot(slot + 1)] };
}

function hashed(form: 't' | 'c' | 'u' | 'w', parts: readonly (string | null)[]): string {
  const hash = createHash('sha256')
    .update(JSON.stringify([CONTENT_ID_VERSION, form, ...parts]))
    .digest('base64url');
  return `${CONTENT_ID_VERSION}${form}-${hash}`;
}
