/**
 * The words of a search result that the query matched, for <mark>. The gateway matches whole
 * words after one folding rule (libs/contracts/src/search-terms.ts, `searchWords`): NFKD,
 * combining marks removed, lower case, runs of letters and digits. The console cannot import it
 * at run time (it is the gateway's CommonJS), so `foldWords` restates it and highlight.test.ts
 * holds the two equal.
 */

const wordPattern = /[\p{L}\p{N}]+/gu;
const combiningMarks = /\p{M}/gu;
/** A word as written, combining marks kept ("é" written as e + U+0301 is one word). */
const writtenWord = /[\p{L}\p{N}\p{M}]+/gu;

export function foldWords(text: string): string[] {
  return text.normalize('NFKD').replace(combiningMarks, '').toLowerCase().match(wordPattern) ?? [];
}

export interface TextPiece {
  text: string;
  match: boolean;
}

/** `text` cut into pieces, each written word that folds to one of the query's words marked. */
export function highlight(text: string, query: string): TextPiece[] {
  const terms = new Set(foldWords(query));
  const pieces: TextPiece[] = [];
  let last = 0;
  const push = (piece: TextPiece) => {
    const previous = pieces[pieces.length - 1];
    if (previous && previous.match === piece.match) previous.text += piece.text;
    else pieces.push(piece);
  };
  if (terms.size > 0) {
    for (const found of text.matchAll(writtenWord)) {
      if (!foldWords(found[0]).some((word) => terms.has(word))) continue;
      if (found.index > last) push({ text: text.slice(last, found.index), match: false });
      pieces.push({ text: found[0], match: true });
      last = found.index + found[0].length;
    }
  }
  if (last < text.length) push({ text: text.slice(last), match: false });
  return pieces;
}
