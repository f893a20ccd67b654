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
