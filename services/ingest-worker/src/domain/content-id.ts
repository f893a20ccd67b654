import { createHash } from 'node:crypto';
import { canonicalDateTime, type ContentItem, type Transcription } from '@screenfleet/contracts';

/** Version of the derivation: ids stored before it (untagged, 43 characters) are version 1. */
export const CONTENT_ID_VERSION = 2;

/** An item as its id sees it: the batch's device (and receipt time), and what the item carries. */
export type IdSource =
  | { device: string; content_type: 'frames'; item: ContentItem }
  | { device: string; content_type: 'transcription'; item: Transcription; received_at: string };

/**
 * Deterministic _id of a content item, so a redelivered message or a re-sent batch never stores
 * an item twice (ARCHITECTURE.md "Storage"): `<version><form>-<sha256 base64url>`, e.g. `2t-...`.
 * Three forms, each a tag of its own in the _id so that ids of different forms can never collide
 * and a reader can tell them apart:
 * - `t`: an item with a client timestamp: (device, content type, file path, timestamp in UTC
 *   with every fraction digit sent: `.1234Z` and `.1235Z` are different items);
 * - `c`: an item without one gets the receipt time, which a client's retry would change, so its
 *   id comes from what it carries: (device, content type, file path, OCR texts);
 * - `r`: a transcription carries neither a path nor a time; its id includes the receipt time
 *   (which travels in the message, so redelivery is still harmless) because ids from the text
 *   alone would merge distinct utterances of the same words ("yes", "ok").
 */
export function contentId(source: IdSource): string {
  const { device } = source;
  if (source.content_type === 'transcription') {
    const { transcription, transcription_engine } = source.item;
    const engine = transcription_engine ?? null;
    return hashed('r', [device, 'transcription', transcription, engine, source.received_at]);
  }
  const { file_path, timestamp, ocr_results } = source.item;
  return timestamp
    ? hashed('t', [device, 'frames', file_path, canonicalDateTime(timestamp)])
    : hashed('c', [device, 'frames', file_path, ...(ocr_results ?? []).map((r) => r.text)]);
}

function hashed(form: 't' | 'c' | 'r', parts: readonly (string | null)[]): string {
  const hash = createHash('sha256')
    .update(JSON.stringify([CONTENT_ID_VERSION, form, ...parts]))
    .digest('base64url');
  return `${CONTENT_ID_VERSION}${form}-${hash}`;
}
