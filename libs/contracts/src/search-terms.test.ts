import { searchTerms, searchWords } from './search-terms';

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
