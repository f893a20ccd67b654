import { itemText, searchTerms, searchWords, textLength } from './search-terms';

describe('searchTerms', () => {
  it('when words differ only in case, then they are one lower-case term', () => {
    expect(searchTerms('Invoice INVOICE invoice InVoIcE')).toEqual(['invoice']);
  });

  it('when letters carry diacritics, then they are folded to the base letter', () => {
    expect(searchTerms('Café crème brûlée naïve Ångström Łódź')).toEqual([
      'cafe',
      'creme',
      'brulee',
      'naive',
      'angstrom',
      // Ł has no decomposition (it is a letter of its own, not L + a mark): kept, lower-cased.
      'łodz',
    ]);
    // Precomposed and decomposed spellings are the same term.
    expect(searchTerms('Cafe\u0301')).toEqual(['cafe']);
  });

  it('when text is in scripts other than Latin, then their letters are kept', () => {
    expect(searchTerms('Привет МИР, йод')).toEqual(['привет', 'мир', 'иод']);
    expect(searchTerms('東京都 の 天気')).toEqual(['東京都', 'の', '天気']);
    expect(searchTerms('Ελλάδα ΑΘΗΝΑ')).toEqual(['ελλαδα', 'αθηνα']);
    expect(searchTerms('مرحبا بالعالم')).toEqual(['مرحبا', 'بالعالم']);
  });

  it('when compatibility forms are used, then they match their plain spelling', () => {
    expect(searchTerms('ﬁle ＡＢＣ１２３ ℍotel x²')).toEqual(['file', 'abc123', 'hotel', 'x2']);
  });

  it('when words are joined by punctuation or symbols, then they split there', () => {
    expect(
      searchTerms('foo.bar,baz;qux/quux-corge_grault "x" (y) [z] a+b=c e-mail@host.com'),
    ).toEqual([
      'foo',
      'bar',
      'baz',
      'qux',
      'quux',
      'corge',
      'grault',
      'x',
      'y',
      'z',
      'a',
      'b',
      'c',
      'e',
      'mail',
      'host',
      'com',
    ]);
    expect(searchTerms('3.14 v2 2026-11-23')).toEqual(['3', '14', 'v2', '2026', '11', '23']);
    expect(searchTerms('hello👋world 😀')).toEqual(['hello', 'world']);
  });

  it('when a word repeats, then it is one term, in first-seen order', () => {
    expect(searchTerms('b a b c a')).toEqual(['b', 'a', 'c']);
  });

  it('when the text has no letters or digits, then there are no terms', () => {
    expect(searchTerms('')).toEqual([]);
    expect(searchTerms('   \n\t ')).toEqual([]);
    expect(searchTerms('!?.,;:-— …')).toEqual([]);
  });

  it('when terms are normalised again, then nothing changes (query and index agree)', () => {
    const terms = searchTerms('Crème BRÛLÉE, ﬁle 東京 Привет');
    expect(searchTerms(terms.join(' '))).toEqual(terms);
  });
});

describe('searchWords', () => {
  it('when a word repeats, then every occurrence is kept in order', () => {
    expect(searchWords('The cat, the HAT; the Café')).toEqual([
      'the',
      'cat',
      'the',
      'hat',
      'the',
      'cafe',
    ]);
  });
});

const ocr = (text: string) => ({ text });

describe('itemText', () => {
  it("when the item is a frame, then it is the OCR results' texts joined by new lines", () => {
    expect(
      itemText({ ocr_results: [ocr('Inbox'), ocr(''), ocr('Reply all')], transcription: null }),
    ).toBe('Inbox\n\nReply all');
  });

  it('when a frame has no OCR result, then its text is empty', () => {
    expect(itemText({ ocr_results: [], transcription: null })).toBe('');
  });

  it("when the item is a transcription, then it is the transcription's text", () => {
    expect(itemText({ ocr_results: [], transcription: { text: 'let us meet at noon' } })).toBe(
      'let us meet at noon',
    );
  });
});

describe('textLength', () => {
  it('when text has characters outside the BMP, then each counts once', () => {
    expect(textLength('')).toBe(0);
    expect(textLength('abc')).toBe(3);
    expect(textLength('Café')).toBe(4);
    expect(textLength('東京')).toBe(2);
    expect(textLength('a😀b𝔸')).toBe(4);
    expect(textLength('a😀b𝔸')).toBe([...'a😀b𝔸'].length);
  });

  it('when a surrogate is unpaired, then it counts as one character', () => {
    expect(textLength('a\ud800b')).toBe(3);
    expect(textLength('\udc00\ud800')).toBe(2);
    expect(textLength('x\ud83d')).toBe(2);
  });

  it('when a character is made of a letter and a combining mark, then both count', () => {
    // Code points, as the spec of min_length says, not grapheme clusters.
    expect(textLength('e\u0301')).toBe(2);
  });
});
