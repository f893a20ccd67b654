import { searchTerms } from '@screenfleet/contracts';
import type { ContentDocument, ContentStore, SearchQuery } from '@screenfleet/storage';
import { buildItem, t } from './content-store.contract';

/**
 * What every ContentStore adapter's search must do (SearchQuery's comments are the rules). An
 * adapter's test file calls this with a factory that returns an empty store and a way to remove it.
 */
export function describeContentSearchContract(
  name: string,
  makeStore: () => Promise<{ store: ContentStore; cleanup: () => Promise<void> }>,
): void {
  describe(`ContentStore search contract: ${name}`, () => {
    let store: ContentStore;
    let cleanup: (() => Promise<void>) | undefined;

    beforeEach(async () => {
      ({ store, cleanup } = await makeStore());
      await store.ensureIndexes();
    });

    afterEach(async () => {
      await cleanup?.();
      cleanup = undefined;
    });

    /** The ids a query finds (every page at once) and its total, which must agree. */
    async function found(overrides: Partial<SearchQuery>): Promise<string[]> {
      const result = await store.search(query({ limit: 1000, ...overrides }));
      expect(result.total).toBe(result.items.length);
      return result.items.map((doc) => doc._id);
    }

    const sorted = (ids: string[]) => [...ids].sort();

    describe('words', () => {
      beforeEach(async () => {
        await store.insertItems([
          frame('ab', 'alpha beta', { timestamp: t(1) }),
          frame('ag', 'Alpha. Gamma!', { timestamp: t(2) }),
          frame('bg', 'beta\ngamma', { timestamp: t(3) }),
          frame('alphabet', 'alphabet soup', { timestamp: t(4) }),
          frame('multi', '', {
            timestamp: t(5),
            ocr_results: [ocr('first line alpha'), ocr(''), ocr('other result delta')],
          }),
        ]);
      });

      it('when several words are asked, then only items holding all of them are found', async () => {
        expect(sorted(await found({ terms: ['alpha'] }))).toEqual(['ab', 'ag', 'multi']);
        expect(await found({ terms: ['alpha', 'beta'] })).toEqual(['ab']);
        expect(await found({ terms: ['gamma', 'beta'] })).toEqual(['bg']);
        expect(await found({ terms: ['alpha', 'zeta'] })).toEqual([]);
        expect(await found({ terms: ['zeta'] })).toEqual([]);
      });

      it('when a word is part of a longer word, then it does not match it (whole words only)', async () => {
        expect(await found({ terms: ['alphabet'] })).toEqual(['alphabet']);
        expect(await found({ terms: ['alph'] })).toEqual([]);
        expect(await found({ terms: ['soup', 'alpha'] })).toEqual([]);
      });

      it("when the words are in different OCR results of a frame, then the frame's text holds them all", async () => {
        expect(await found({ terms: ['alpha', 'delta'] })).toEqual(['multi']);
      });

      it("when a word is only an item's content type or device, then it does not match", async () => {
        expect(await found({ terms: ['frames'] })).toEqual([]);
        expect(await found({ terms: ['device', '1'] })).toEqual([]);
      });

      it('when no words are asked, then every item is found, newest first', async () => {
        expect(await found({ terms: [] })).toEqual(['multi', 'alphabet', 'bg', 'ag', 'ab']);
      });
    });

    describe('case and diacritics', () => {
      beforeEach(async () => {
        await store.insertItems([
          frame('cafe', 'Le CAFÉ crème', { timestamp: t(1) }),
          frame('plain', 'cafe creme', { timestamp: t(2) }),
          frame('scripts', 'Привет МИР 東京都 Ελλάδα', { timestamp: t(3) }),
        ]);
      });

      it('when words differ in case or diacritics, then they match', async () => {
        const cafe = ['cafe', 'plain'];
        expect(sorted(await found({ terms: searchTerms('Café') }))).toEqual(cafe);
        expect(sorted(await found({ terms: searchTerms('CAFE CRÈME') }))).toEqual(cafe);
        expect(sorted(await found({ terms: ['cafe', 'creme'] }))).toEqual(cafe);
      });

      it('when the terms are not normalised, then the store normalises them', async () => {
        expect(sorted(await found({ terms: ['Café', 'CRÈME'] }))).toEqual(['cafe', 'plain']);
      });

      it('when the text is Cyrillic, CJK or Greek, then its words are found', async () => {
        expect(await found({ terms: searchTerms('привет') })).toEqual(['scripts']);
        expect(await found({ terms: searchTerms('мир 東京都') })).toEqual(['scripts']);
        expect(await found({ terms: searchTerms('ελλαδα') })).toEqual(['scripts']);
        expect(await found({ terms: searchTerms('東京') })).toEqual([]);
      });
    });

    describe('filters', () => {
      beforeEach(async () => {
        await store.insertItems([
          frame('fx', 'report', {
            device_name: 'laptop',
            app_name: 'Firefox',
            window_name: 'Quarterly Report — Mozilla Firefox',
            timestamp: t(1),
          }),
          frame('fxdev', 'report', {
            device_name: 'desktop',
            app_name: 'FIREFOX Developer Edition',
            window_name: 'about:config',
            timestamp: t(2),
          }),
          frame('editor', 'report', {
            device_name: 'laptop',
            app_name: 'Éditeur',
            window_name: 'Notes (draft).txt',
            timestamp: t(3),
          }),
          frame('unnamed', 'report', {
            device_name: 'tablet',
            app_name: null,
            window_name: null,
            timestamp: t(4),
          }),
          audio('talk', 'the report is due', { device_name: 'laptop', timestamp: t(5) }),
        ]);
      });

      it('when content types are given, then only those types are found', async () => {
        const frames = ['unnamed', 'editor', 'fxdev', 'fx'];
        expect(await found({ contentTypes: ['frames'] })).toEqual(frames);
        expect(await found({ contentTypes: ['transcription'] })).toEqual(['talk']);
        expect(await found({ contentTypes: ['frames', 'transcription'] })).toEqual([
          'talk',
          ...frames,
        ]);
        expect(await found({ contentTypes: [] })).toEqual([]);
        expect(await found({ terms: ['report'], contentTypes: ['transcription'] })).toEqual([
          'talk',
        ]);
        expect(await found({ terms: ['report'], contentTypes: [] })).toEqual([]);
      });

      it('when devices are given, then only their items are found', async () => {
        expect(await found({ devices: ['laptop'] })).toEqual(['talk', 'editor', 'fx']);
        expect(await found({ devices: ['desktop', 'tablet'] })).toEqual(['unnamed', 'fxdev']);
        expect(await found({ devices: ['nobody'] })).toEqual([]);
        expect(await found({ devices: [] })).toEqual([]);
        expect(await found({ terms: ['report'], devices: ['tablet'] })).toEqual(['unnamed']);
      });

      it('when device names hold spaces, quotes or other scripts, then each matches only itself', async () => {
        const odd = ['Ana\'s "Mac" — é', 'Ana', '東京 laptop', 'Ana\'s "Mac" — e'];
        await store.insertItems(
          odd.map((device_name, i) =>
            frame(`odd-${i}`, 'report', { device_name, timestamp: t(10 + i) }),
          ),
        );

        for (const terms of [[], ['report']]) {
          expect(await found({ terms, devices: [odd[0]!] })).toEqual(['odd-0']);
          expect(await found({ terms, devices: [odd[2]!, odd[1]!] })).toEqual(['odd-2', 'odd-1']);
          expect(await found({ terms, devices: ['ana'] })).toEqual([]);
        }
      });

      it('when an app name is given, then it matches within the name, whatever the case', async () => {
        expect(await found({ appName: 'fox' })).toEqual(['fxdev', 'fx']);
        expect(await found({ appName: 'FireFox' })).toEqual(['fxdev', 'fx']);
        expect(await found({ appName: 'developer edition' })).toEqual(['fxdev']);
        expect(await found({ appName: 'éDITEUR' })).toEqual(['editor']);
        expect(await found({ appName: 'editeur' })).toEqual([]);
        expect(await found({ terms: ['report'], appName: 'firefox' })).toEqual(['fxdev', 'fx']);
      });

      it('when an app name filter is given, then items without a name never match', async () => {
        expect(await found({ appName: '' })).toEqual(['editor', 'fxdev', 'fx']);
        expect(await found({ windowName: '' })).toEqual(['editor', 'fxdev', 'fx']);
      });

      it('when a name filter holds pattern characters, then they match only themselves', async () => {
        expect(await found({ windowName: '(draft).' })).toEqual(['editor']);
        expect(await found({ windowName: '.' })).toEqual(['editor']);
        expect(await found({ windowName: 'a.*t' })).toEqual([]);
        expect(await found({ appName: '[fF]irefox' })).toEqual([]);
      });

      it('when a window name is given, then it matches within the name, whatever the case', async () => {
        expect(await found({ windowName: 'mozilla' })).toEqual(['fx']);
        expect(await found({ windowName: 'QUARTERLY REPORT — MOZ' })).toEqual(['fx']);
        expect(await found({ windowName: 'about:' })).toEqual(['fxdev']);
        expect(await found({ windowName: 'about', appName: 'editor' })).toEqual([]);
      });
    });

    describe('text length', () => {
      beforeEach(async () => {
        await store.insertItems([
          frame('three', 'a😀b', { timestamp: t(1) }), // three characters, four UTF-16 units
          frame('five', 'abcde', { timestamp: t(2) }),
          frame('lines', '', { timestamp: t(3), ocr_results: [ocr('abc'), ocr('de')] }), // 6
          audio('eight', 'abcdefgh', { timestamp: t(4) }),
          frame('empty', '', { timestamp: t(5), ocr_results: [] }),
        ]);
      });

      it('when min and max lengths are given, then they bound the characters of the text, inclusive', async () => {
        expect(await found({ minLength: 5 })).toEqual(['eight', 'lines', 'five']);
        expect(await found({ maxLength: 5 })).toEqual(['empty', 'five', 'three']);
        expect(await found({ minLength: 5, maxLength: 5 })).toEqual(['five']);
        expect(await found({ minLength: 3, maxLength: 3 })).toEqual(['three']);
        expect(await found({ minLength: 6, maxLength: 6 })).toEqual(['lines']);
        expect(await found({ minLength: 1, maxLength: 0 })).toEqual([]);
        expect(await found({ maxLength: 0 })).toEqual(['empty']);
        expect(await found({ terms: ['abcdefgh'], minLength: 8 })).toEqual(['eight']);
        expect(await found({ terms: ['abcdefgh'], maxLength: 7 })).toEqual([]);
      });
    });

    describe('time bounds', () => {
      const ms = (n: number) => new Date(t(2).getTime() + n);

      beforeEach(async () => {
        await store.insertItems([
          frame('t0', 'tick', { timestamp: t(0) }),
          frame('t1', 'tick', { timestamp: t(1) }),
          frame('t2-1ms', 'tick', { timestamp: ms(-1) }),
          frame('t2', 'tick', { timestamp: t(2) }),
          frame('t2+1ms', 'tick', { timestamp: ms(1) }),
          frame('t3', 'tick', { timestamp: t(3) }),
        ]);
      });

      // Both ways through the sqlite store: with words (the search index) and without (rows).
      for (const terms of [[], ['tick']]) {
        it(`when from and to are given (terms ${JSON.stringify(terms)}), then both are inclusive`, async () => {
          expect(await found({ terms, from: t(1), to: t(3) })).toEqual([
            't3',
            't2+1ms',
            't2',
            't2-1ms',
            't1',
          ]);
          expect(await found({ terms, from: t(2), to: t(2) })).toEqual(['t2']);
          expect(await found({ terms, from: ms(1) })).toEqual(['t3', 't2+1ms']);
          expect(await found({ terms, to: ms(-1) })).toEqual(['t2-1ms', 't1', 't0']);
          expect(await found({ terms, from: t(3), to: t(2) })).toEqual([]);
          expect(await found({ terms, from: new Date('1970-01-01T00:00:00Z') })).toHaveLength(6);
          expect(await found({ terms, to: new Date('2200-01-01T00:00:00Z') })).toHaveLength(6);
        });
      }

      it('when bounds lie far outside any item, then they exclude or include everything', async () => {
        const far = { past: new Date(-8.64e15), future: new Date(8.64e15) };
        for (const terms of [[], ['tick']]) {
          expect(await found({ terms, from: far.past, to: far.future })).toHaveLength(6);
          expect(await found({ terms, from: far.future })).toEqual([]);
          expect(await found({ terms, to: far.past })).toEqual([]);
        }
      });
    });

    describe('paging', () => {
      // 25 items, some sharing a timestamp, across two calls.
      const items = Array.from({ length: 25 }, (_, i) =>
        frame(`p-${String(i).padStart(2, '0')}`, i % 2 === 0 ? 'page even' : 'page odd', {
          timestamp: t(Math.floor(i / 3)),
        }),
      );

      beforeEach(async () => {
        await store.insertItems(items.slice(10));
        await store.insertItems(items.slice(0, 10));
      });

      for (const terms of [[], ['page'], ['even']]) {
        it(`when pages are walked until offset >= total (terms ${JSON.stringify(terms)}), then every item comes exactly once, newest first`, async () => {
          const expected = items.filter((item) =>
            terms.every((term) => itemWords(item).includes(term)),
          );
          const seen: ContentDocument[] = [];
          let offset = 0;
          let total = Number.POSITIVE_INFINITY;
          while (offset < total) {
            const page = await store.search(query({ terms, limit: 4, offset }));
            expect(page.items.length).toBeLessThanOrEqual(4);
            if (page.items.length === 0) break;
            total = page.total;
            seen.push(...page.items);
            offset += page.items.length;
          }

          expect(total).toBe(expected.length);
          expect(sorted(seen.map((doc) => doc._id))).toEqual(
            sorted(expected.map((doc) => doc._id)),
          );
          const times = seen.map((doc) => doc.timestamp.getTime());
          expect(times).toEqual([...times].sort((a, b) => b - a));
        });
      }

      it('when the offset is past the end, then the page is empty and the total exact', async () => {
        expect(await store.search(query({ terms: ['odd'], offset: 12 }))).toEqual({
          items: [],
          total: 12,
        });
      });

      it('when the limit is 0, then only the total is answered', async () => {
        expect(await store.search(query({ terms: ['even'], limit: 0 }))).toEqual({
          items: [],
          total: 13,
        });
        expect(await store.search(query({ limit: 0 }))).toEqual({ items: [], total: 25 });
      });

      it('when a page reaches maxBytes of documents, then it ends there (one item at least), in the same order, and offset += its length reads the rest', async () => {
        const big = (id: string, at: number, order: string) =>
          frame(id, `${order} ${'lorem '.repeat(2000)}`, { timestamp: t(100 + at) });
        // About 12 KB each: past 25,000 bytes after the third.
        const bigs = ['big-1', 'big-2', 'big-3', 'big-4', 'big-5'].map((id, i) =>
          big(id, i, i === 2 ? 'lorem lorem' : 'ipsum'),
        );
        await store.insertItems(bigs);
        for (const [terms, order] of [
          [['lorem'], 'newest'],
          [['lorem'], 'relevance'],
          [[], 'newest'],
        ] as const) {
          const whole = await store.search(query({ terms: [...terms], order, limit: 30 }));
          const seen: string[] = [];
          for (let offset = 0; offset < whole.total;) {
            const page = await store.search(
              query({ terms: [...terms], order, limit: 30, offset }),
              {
                maxBytes: 25_000,
              },
            );
            expect(page.total).toBe(whole.total);
            expect(page.items.length).toBeGreaterThanOrEqual(1);
            seen.push(...page.items.map((doc) => doc._id));
            offset += page.items.length;
          }
          expect(seen).toEqual(whole.items.map((doc) => doc._id));
          const first = await store.search(query({ terms: [...terms], order, limit: 30 }), {
            maxBytes: 25_000,
          });
          expect(first.items.map((doc) => doc._id)).toEqual(seen.slice(0, 3));
          const one = await store.search(query({ terms: [...terms], order, limit: 30 }), {
            maxBytes: 1,
          });
          expect(one.items.map((doc) => doc._id)).toEqual(seen.slice(0, 1));
        }
      });

      it('when the same query is asked twice, then the same page comes back (a stable order)', async () => {
        for (const terms of [[], ['page']]) {
          const first = await store.search(query({ terms, limit: 5, offset: 5 }));
          const second = await store.search(query({ terms, limit: 5, offset: 5 }));
          expect(second).toEqual(first);
        }
      });
    });

    describe('order', () => {
      beforeEach(async () => {
        await store.insertItems([
          frame('short', 'Invoice paid', { timestamp: t(1) }),
          frame('long', `invoice ${'and many other words on the screen '.repeat(8)}paid`, {
            timestamp: t(4),
          }),
          frame('medium', 'the invoice was paid on time by the customer', { timestamp: t(3) }),
          frame('twin-old', 'paid invoice twin', { timestamp: t(0) }),
          frame('twin-new', 'paid invoice twin', { timestamp: t(2) }),
          frame('other', 'nothing to see', { timestamp: t(5) }),
        ]);
      });

      it('when the order is newest, then the latest timestamp comes first', async () => {
        expect(await found({ terms: ['invoice', 'paid'] })).toEqual([
          'long',
          'medium',
          'twin-new',
          'short',
          'twin-old',
        ]);
      });

      it('when the order is relevance, then the best text match comes first, and equal matches newest first', async () => {
        expect(await found({ terms: ['invoice', 'paid'], order: 'relevance' })).toEqual([
          'short',
          'twin-new',
          'twin-old',
          'medium',
          'long',
        ]);
      });

      it('when the order is relevance without words, then it is newest first', async () => {
        expect(await found({ order: 'relevance' })).toEqual([
          'other',
          'long',
          'medium',
          'twin-new',
          'short',
          'twin-old',
        ]);
      });

      it('when relevance is paged, then pages follow the same order', async () => {
        const pages = [];
        for (let offset = 0; offset < 5; offset += 2) {
          const page = await store.search(
            query({ terms: ['invoice'], order: 'relevance', limit: 2, offset }),
          );
          expect(page.total).toBe(5);
          pages.push(...page.items.map((doc) => doc._id));
        }
        expect(pages).toEqual(await found({ terms: ['invoice'], order: 'relevance' }));
      });
    });

    describe('transcriptions', () => {
      it('when a transcription holds the words, then it is found, intact', async () => {
        const talk = audio('talk', "Let's meet at NOON, café downstairs", { timestamp: t(1) });
        await store.insertItems([talk, frame('screen', 'noon', { timestamp: t(2) })]);

        const result = await store.search(query({ terms: searchTerms('noon cafe') }));

        expect(result).toEqual({ items: [talk], total: 1 });
      });
    });

    describe('what comes back', () => {
      it('when items are found, then they equal what was inserted (no search fields added)', async () => {
        const docs = [
          frame('f', 'Hello wörld', {
            timestamp: new Date('2026-11-22T10:00:00.123Z'),
            tags: ['a', 'b'],
            ocr_results: [
              {
                text: 'Hello wörld',
                confidence: 0.5,
                text_json: '[]',
                ocr_engine: 'tesseract',
                focused: true,
              },
            ],
          }),
          audio('a', 'hello there', { timestamp: new Date('2026-11-22T10:00:01Z') }),
        ];
        await store.insertItems(docs);

        for (const terms of [[], ['hello']]) {
          expect((await store.search(query({ terms }))).items).toEqual([docs[1], docs[0]]);
        }
        const scanned: ContentDocument[] = [];
        for await (const chunk of store.scanRange({ to: t(10_000) }, { chunkSize: 10 })) {
          scanned.push(...chunk);
        }
        expect(scanned).toEqual(docs);
      });
    });

    describe('archive and restore', () => {
      const docs = ['a', 'b', 'c'].map((id, i) =>
        frame(id, `archived item ${id}`, { timestamp: t(i) }),
      );

      beforeEach(async () => {
        await store.insertItems(docs);
      });

      it('when items are deleted (archived), then search no longer finds or counts them', async () => {
        await store.deleteByIds(['a', 'c']);

        expect(await found({ terms: ['archived'] })).toEqual(['b']);
        expect(await found({ terms: ['a'] })).toEqual([]);
        expect(await found({})).toEqual(['b']);
        expect(await found({ terms: ['archived'], appName: 'terminal' })).toEqual(['b']);
      });

      it('when deleted items are inserted again (restored), then search finds them again', async () => {
        await store.deleteByIds(['a', 'b', 'c']);
        expect(await found({ terms: ['archived'] })).toEqual([]);

        expect(await store.insertItems(docs)).toEqual({ inserted: 3, alreadyStored: 0 });

        expect(await found({ terms: ['archived'] })).toEqual(['c', 'b', 'a']);
        expect(await found({ terms: ['c', 'archived'] })).toEqual(['c']);
        expect((await store.search(query({ terms: ['item'] }))).items).toEqual([...docs].reverse());
      });

      it('when an item is inserted again while stored, then it is found once', async () => {
        expect(await store.insertItems(docs)).toEqual({ inserted: 0, alreadyStored: 3 });

        expect(await found({ terms: ['archived'] })).toEqual(['c', 'b', 'a']);
      });
    });

    describe('freshness', () => {
      it('when an item is inserted right before a search, then that search finds it', async () => {
        await store.insertItems([frame('old', 'fresh news', { timestamp: t(1) })]);
        expect(await found({ terms: ['fresh'] })).toEqual(['old']);

        await store.insertItems([frame('new', 'fresh news', { timestamp: t(2) })]);

        expect(await found({ terms: ['fresh'] })).toEqual(['new', 'old']);
        expect((await store.search(query({ terms: ['news'], limit: 1 }))).total).toBe(2);
      });
    });
  });
}

/** Everything found, newest first; tests override what they look at. */
export function query(overrides: Partial<SearchQuery> = {}): SearchQuery {
  return {
    terms: [],
    contentTypes: ['frames', 'transcription'],
    order: 'newest',
    limit: 100,
    offset: 0,
    ...overrides,
  };
}

const ocr = (text: string) => ({
  text,
  confidence: 0.9,
  text_json: null,
  ocr_engine: 'tesseract',
  focused: null,
});

/** A frame whose one OCR result is `text` (unless ocr_results is overridden). */
export function frame(
  _id: string,
  text: string,
  overrides: Partial<ContentDocument> = {},
): ContentDocument {
  return buildItem({ _id, ocr_results: [ocr(text)], ...overrides });
}

export function audio(
  _id: string,
  text: string,
  overrides: Partial<ContentDocument> = {},
): ContentDocument {
  return buildItem({
    _id,
    content_type: 'transcription',
    file_path: null,
    app_name: null,
    window_name: null,
    ocr_results: [],
    tags: [],
    transcription: { text, engine: 'whisper' },
    ...overrides,
  });
}

function itemWords(doc: ContentDocument): string[] {
  return searchTerms(doc.ocr_results.map((result) => result.text).join('\n'));
}
