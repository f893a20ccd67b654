import { searchWords } from '@screenfleet/contracts';
import { foldWords, highlight } from './highlight';

const marked = (text: string, query: string) =>
  highlight(text, query)
    .filter((piece) => piece.match)
    .map((piece) => piece.text);

describe('foldWords', () => {
  it.each([
    'Quarterly REPORT, due Friday!',
    'Café crème brûlée',
    'Cafe\u0301 (e + a combining accent)',
    'ﬁle ２０２６ ℍello',
    'Привет, мир; й',
    '東京タワー 2026年',
    'snake_case kebab-case dotted.name',
    '',
  ])('when "%s" is folded, then it gives the gateway\'s searchWords', (text) => {
    expect(foldWords(text)).toEqual(searchWords(text));
  });
});

describe('highlight', () => {
  it('when the query words occur, then exactly those written words are marked, in any case', () => {
    expect(marked('The Quarterly report: quarterly numbers', 'quarterly REPORT')).toEqual([
      'Quarterly',
      'report',
      'quarterly',
    ]);
  });

  it('when a word is written with accents or compatibility forms, then it is marked as the gateway matches it', () => {
    expect(marked('Café and ﬁle and Cafe\u0301', 'cafe file')).toEqual([
      'Café',
      'ﬁle',
      'Cafe\u0301',
    ]);
  });

  it('when a query word is only part of a written word, then nothing is marked (whole words match)', () => {
    expect(marked('reporting reports', 'report')).toEqual([]);
  });

  it('when pieces are joined, then they give the text back unchanged', () => {
    const text = '  Hello, wörld! hello\nagain ';
    expect(
      highlight(text, 'hello world')
        .map((piece) => piece.text)
        .join(''),
    ).toBe(text);
    expect(highlight(text, 'hello world')).toEqual([
      { text: '  ', match: false },
      { text: 'Hello', match: true },
      { text: ', ', match: false },
      { text: 'wörld', match: true },
      { text: '! ', match: false },
      { text: 'hello', match: true },
      { text: '\nagain ', match: false },
    ]);
  });

  it('when the query has no words, then nothing is marked', () => {
    expect(highlight('some text', ' ,; ')).toEqual([{ text: 'some text', match: false }]);
    expect(highlight('', 'word')).toEqual([]);
  });
});
