import { createHash } from 'node:crypto';

/**
 * Deterministic _id of a content item, so a redelivered message or a re-sent batch never stores
 * an item twice (ARCHITECTURE.md "Storage"):
 * - an item with a client timestamp: (device, content type, file path, timestamp);
 * - an item without one gets the receipt time, which a client's retry would change, so its id
 *   comes from what it carries: (device, content type, file path, OCR texts);
 * - a transcription carries neither a path nor a time; its id includes the receipt time
 *   (which travels in the message, so redelivery is still harmless) because ids from the text
 *   alone would merge distinct utterances of the same words ("yes", "ok").
 */
export function contentId(parts: readonly (string | null)[]): string {
  return createHash('sha256').update(JSON.stringify(parts)).digest('base64url');
}
