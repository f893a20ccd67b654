import { searchTerms } from '@screenfleet/contracts';
import type { ContentDocument, SearchQuery } from './content-store';

/**
 * The text of an item as search sees it: what its words are matched in, what min/max length
 * count and what GET /search shows. A frame's OCR texts in order, one per line (empty ones
 * included, so the lines keep their positions); a transcription's text.
 */
export function itemText(doc: Pick<ContentDocument, 'ocr_results' | 'transcription'>): string {
  if (doc.transcription) return doc.transcription.text;
  return doc.ocr_results.map((result) => result.text).join('\n');
}

/** Characters as SearchQuery's min/max length count them (Unicode code points): an emoji is one, not two. */
export function textLength(text: string): number {
  let length = text.length;
  for (let i = 0; i < text.length; i += 1) {
    const unit = text.charCodeAt(i);
    // A high surrogate followed by a low one is one code point in two UTF-16 units.
    if (unit >= 0xd800 && unit <= 0xdbff) {
      const next = text.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        length -= 1;
        i += 1;
      }
    }
  }
  return length;
}

/**
 * A query's terms, normalised again (idempotent for what searchTerms gave), so both stores
 * agree whatever a caller passes: "Café" finds what the index holds as "cafe".
 */
export function queryTerms(query: Pick<SearchQuery, 'terms'>): string[] {
  return searchTerms(query.terms.join(' '));
}
