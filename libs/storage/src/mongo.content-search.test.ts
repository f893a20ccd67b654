import { searchTerms, sizeLimits } from '@screenfleet/contracts';
import { BSON } from 'mongodb';
import type { ContentDocument } from './content-store';
import { searchFields, searchFilter, searchSort } from './mongo.content-search';

const frame = (texts: string[]): ContentDocument => ({
  _id: 'f',
  device_name: 'd',
  content_type: 'frames',
  timestamp: new Date(0),
  timestamp_source: 'client',
  received_at: new Date(0),
  file_path: '/f.mp4',
  app_name: null,
  window_name: null,
  ocr_results: texts.map((text) => ({
    text,
    confidence: null,
    text_json: null,
    ocr_engine: null,
    focused: null,
  })),
  tags: [],
  transcription: null,
});

describe('searchFields', () => {
  it('when an item is ordinary, then it keeps all its terms and its length in characters', () => {
    expect(searchFields(frame(['Hello wörld', 'hello 😀 again']))).toEqual({
      search_terms: ['hello', 'world', 'again'],
      search_text_length: 25, // 11 + a new line + 13: the emoji is one
    });
  });

  it('when its distinct words would push the stored document past 16 MiB, then the last-seen terms are left out and it fits', () => {
    // A document near the limit (a large text_json) and ~2 MB of terms on top.
    const text = Array.from({ length: 120_000 }, (_, i) => i.toString(36)).join(' ');
    const doc = frame([text]);
    doc.ocr_results[0]!.text_json = 'j'.repeat(15 * 1024 * 1024);

    const fields = searchFields(doc);

    const all = searchTerms(text);
    expect(fields.search_terms.length).toBeGreaterThan(10_000);
    expect(fields.search_terms.length).toBeLessThan(all.length);
    expect(fields.search_terms).toEqual(all.slice(0, fields.search_terms.length));
    expect(BSON.calculateObjectSize({ ...doc, ...fields })).toBeLessThanOrEqual(
      sizeLimits.maxStoredDocumentBytes,
    );
  });
});

describe('searchFilter and searchSort', () => {
  const base = {
    terms: [],
    contentTypes: ['frames' as const],
    order: 'newest' as const,
    limit: 10,
    offset: 0,
  };

  it('when a name holds regular expression characters, then they are escaped', () => {
    expect(searchFilter({ ...base, appName: 'a.b*(c)[d]$^|?+{1}\\' }).app_name).toEqual({
      $regex: 'a\\.b\\*\\(c\\)\\[d\\]\\$\\^\\|\\?\\+\\{1\\}\\\\',
      $options: 'i',
    });
  });

  it('when relevance is asked without words, then the order is newest', () => {
    expect(searchSort({ ...base, order: 'relevance' })).toEqual({ timestamp: -1, _id: -1 });
    expect(searchSort({ ...base, order: 'relevance', terms: ['!!!'] })).toEqual({
      timestamp: -1,
      _id: -1,
    });
    expect(searchSort({ ...base, order: 'relevance', terms: ['x'] })).toEqual({
      search_text_length: 1,
      timestamp: -1,
      _id: -1,
    });
  });
});
