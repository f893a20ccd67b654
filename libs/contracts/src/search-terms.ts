// The words of search, one rule for every side: the words the stores keep for an item
// (searchWords/searchTerms of itemText), what a query asks for (searchTerms of q, queryTerms)
// and how min/max length count (textLength). The gateway's console folds words the same way.

// Unicode words: runs of letters and digits. Everything else (spaces, punctuation, symbols,
// combining marks left after folding) separates words.
const wordPattern = /[\p{L}\p{N}]+/gu;
const combiningMarks = /\p{M}/gu;

/**
 * Every word of `text` in order, repeats kept, normalised by the one rule the stores' indexes and
 * GET /search's `q` share: compatibility decomposition (NFKD: "ﬁ" -> "fi", "２" -> "2"),
 * combining marks removed ("é" -> "e", "й" -> "и"), lower case, split into runs of letters and
 * digits. CJK and other scripts without spaces stay one word per run, as SQLite's unicode61
 * tokenizer keeps them. The sqlite store indexes these (repeats count towards relevance).
 */
export function searchWords(text: string): string[] {
  // Lower case after NFKD: decomposition can yield capitals ("ℍ" -> "H").
  return text.normalize('NFKD').replace(combiningMarks, '').toLowerCase().match(wordPattern) ?? [];
}

/**
 * The distinct words of `text` (searchWords), in first-seen order: what an item is found by (all
 * of a query's terms must be among its terms) and what a query's `q` asks for. Empty for text
 * without letters or digits.
 */
export function searchTerms(text: string): string[] {
  return [...new Set(searchWords(text))];
}

/**
 * A query's terms, normalised again (idempotent for what searchTerms gave), so both stores
 * agree whatever a caller passes: "Café" finds what the index holds as "cafe".
 */
export function queryTerms(query: { terms: readonly string[] }): string[] {
  return searchTerms(query.terms.join(' '));
}

/**
 * The text of an item as search sees it: what its words are matched in, what min/max length
 * count and what GET /search shows. A frame's OCR texts in order, one per line (empty ones
 * included, so the lines keep their positions); a transcription's text. Typed by the fields it
 * reads, as the stores' documents have them (contracts cannot import the storage lib).
 */
export function itemText(doc: {
  ocr_results: readonly { text: string }[];
  transcription: { text: string } | null;
}): string {
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
