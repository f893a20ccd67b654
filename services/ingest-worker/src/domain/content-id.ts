import { createHash } from 'node:crypto';

/**
 * The three ways an item's identity is derived, each a tag of its own in the _id so that ids of
 * different forms can never collide and a reader can tell them apart:
 * - `t`: an item with a client timestamp: (device, content type, file path, timestamp in UTC
 *   with every fraction digit sent: `.1234Z` and `.1235Z` are different items);
 * - `c`: an item without one gets the receipt time, which a client's retry would change, so its
 *   id comes from what it carries: (device, content type, file path, OCR texts);
 * - `r`: a transcription carries neither a path nor a time; its id includes the receipt time
 *   (which travels in the message, so redelivery is still harmless) because ids from the text
 *   alone would merge distinct utterances of the same words ("yes", "ok").
 */
export type ContentIdForm = 't' | 'c' | 'r';

/** Version of the derivation: ids stored before it (untagged, 43 characters) are version 1. */
export const CONTENT_ID_VERSION = 2;

/**
 * Deterministic _id of a content item, so a redelivered message or a re-sent batch never stores
 * an item twice (ARCHITECTURE.md "Storage"): `<version><form>-<sha256 base64url>`, e.g. `2t-...`.
 */
export function contentId(form: ContentIdForm, parts: readonly (string | null)[]): string {
  const hash = createHash('sha256')
    .update(JSON.stringify([CONTENT_ID_VERSION, form, ...parts]))
    .digest('base64url');
  return `${CONTENT_ID_VERSION}${form}-${hash}`;
}
