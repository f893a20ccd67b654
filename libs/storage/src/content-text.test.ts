import type { StoredOcrResult } from './content-store';
import { itemText, textLength } from './content-text';

const ocr = (text: string): StoredOcrResult => ({
  text,
  confidence: null,
  text_json: null,
  ocr_engine: null,
  focused: null,
});

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
    expect(
      itemText({ ocr_results: [], transcription: { text: 'let us meet at noon', engine: null } }),
    ).toBe('let us meet at noon');
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
