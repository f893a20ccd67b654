import { parseSearchQuery, searchParameterNames } from '@screenfleet/contracts';
import {
  fromLocalInput,
  pageSize,
  pageText,
  readSearchParams,
  searchFields,
  sincePresets,
  toLocalInput,
  toSearchQuery,
  writeSearchParams,
} from './search-params';

describe('the Search view parameters', () => {
  it("when the form's fields are listed, then each is a parameter GET /search reads", () => {
    for (const field of [...searchFields, 'limit', 'offset']) {
      expect(searchParameterNames).toContain(field);
    }
  });

  it('when a hash query is read and written back, then only the set parameters remain', () => {
    const params = readSearchParams(
      new URLSearchParams('q=%20report%20&content_type=ocr&offset=40&unknown=1&app_name='),
    );
    expect(params).toMatchObject({ q: 'report', content_type: 'ocr', app_name: '', offset: 40 });
    expect(writeSearchParams(params).toString()).toBe('q=report&content_type=ocr&offset=40');
  });

  it('when the offset in the hash is not a whole number, then the first page is shown', () => {
    expect(readSearchParams(new URLSearchParams('offset=-3')).offset).toBe(0);
    expect(readSearchParams(new URLSearchParams('offset=abc')).offset).toBe(0);
  });

  it("when a page is asked for, then the gateway's parser accepts the query as it is", () => {
    const now = new Date('2026-11-22T10:00:00Z');
    for (const { start } of sincePresets) {
      const params = readSearchParams(new URLSearchParams({ q: 'a b', start_time: start }));
      const query = Object.fromEntries(toSearchQuery({ ...params, offset: 20 }));
      const parsed = parseSearchQuery(query, now);
      expect(parsed).toMatchObject({ q: 'a b', limit: pageSize, offset: 20 });
      expect(parsed.from?.getTime()).toBeLessThan(now.getTime());
    }
  });

  it('when a page of results is described, then it names the exact total', () => {
    expect(pageText(20, 20, 137, 'en-US')).toBe('21–40 of 137');
    expect(pageText(0, 1, 1, 'en-US')).toBe('1–1 of 1');
    expect(pageText(0, 0, 0, 'en-US')).toBe('0 results');
    expect(pageText(1000, 0, 12, 'en-US')).toBe('none past 1,000 of 12');
  });

  it('when a local time goes through the form, then it comes back as the same instant', () => {
    const iso = '2026-11-22T10:04:00.000Z';
    expect(fromLocalInput(toLocalInput(iso))).toBe(iso);
    expect(toLocalInput('24h ago')).toBe('');
    expect(fromLocalInput('')).toBe('');
  });
});
