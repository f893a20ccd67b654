import type {
  ContentDocument,
  ContentStore,
  NewContentDocument,
  TimeRange,
} from '@screenfleet/storage';

/**
 * What every ContentStore adapter must do, whatever its technology. An adapter's test file calls
 * this with a factory that returns an empty store and a way to remove it.
 */
export function describeContentStoreContract(
  name: string,
  makeStore: () => Promise<{ store: ContentStore; cleanup: () => Promise<void> }>,
): void {
  describe(`ContentStore contract: ${name}`, () => {
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

    const everything: TimeRange = { to: new Date('2100-01-01T00:00:00Z') };

    async function scanAll(range: TimeRange, chunkSize: number): Promise<ContentDocument[][]> {
      const chunks: ContentDocument[][] = [];
      for await (const chunk of store.scanRange(range, { chunkSize })) chunks.push(chunk);
      return chunks;
    }

    const ids = (docs: ContentDocument[]) => docs.map((doc) => doc._id);

    describe('insertItems', () => {
      it('when all items are new, then all are inserted', async () => {
        const docs = [buildItem({ _id: 'a' }), buildItem({ _id: 'b' }), buildItem({ _id: 'c' })];

        expect(await store.insertItems(docs)).toEqual({ inserted: 3, alreadyStored: 0 });
        expect(await store.countRange(everything)).toBe(3);
      });

      it('when all items were stored before, then all count as already stored and none is duplicated', async () => {
        const docs = [buildItem({ _id: 'a' }), buildItem({ _id: 'b' }), buildItem({ _id: 'c' })];
        await store.insertItems(docs);

        expect(await store.insertItems(docs)).toEqual({ inserted: 0, alreadyStored: 3 });
        expect(await store.countRange(everything)).toBe(3);
      });

      it('when some items were stored before, then only the new ones are inserted', async () => {
        await store.insertItems([buildItem({ _id: 'a' }), buildItem({ _id: 'b' })]);

        const result = await store.insertItems([
          buildItem({ _id: 'c' }),
          buildItem({ _id: 'a' }),
          buildItem({ _id: 'd' }),
          buildItem({ _id: 'b' }),
        ]);

        expect(result).toEqual({ inserted: 2, alreadyStored: 2 });
        expect(await store.countRange(everything)).toBe(4);
        expect(ids((await scanAll(everything, 10)).flat()).sort()).toEqual(['a', 'b', 'c', 'd']);
      });

      it('when a repeated item differs, then the stored one is kept (insert, never update)', async () => {
        await store.insertItems([buildItem({ _id: 'a', app_name: 'first' })]);

        await store.insertItems([buildItem({ _id: 'a', app_name: 'second' })]);

        const [stored] = (await scanAll(everything, 10)).flat();
        expect(stored?.app_name).toBe('first');
      });

      describe('items with claims (a transcription and its retries, docs/adr/0009)', () => {
        // w1 claims w2, w2 claims w3, w3 claims w4: retries of one utterance in later windows.
        const window = (n: number) =>
          buildItem({ _id: `w${n}`, content_type: 'transcription', claims: [`w${n + 1}`] });

        it('when a later retry comes after the original, then it is already stored', async () => {
          await store.insertItems([window(1)]);

          expect(await store.insertItems([window(2)])).toEqual({ inserted: 0, alreadyStored: 1 });
          expect(ids((await scanAll(everything, 10)).flat())).toEqual(['w1']);
        });

        it('when the original comes after its retry, then the original is already stored', async () => {
          await store.insertItems([window(2)]);

          expect(await store.insertItems([window(1)])).toEqual({ inserted: 0, alreadyStored: 1 });
          expect(ids((await scanAll(everything, 10)).flat())).toEqual(['w2']);
        });

        it('when the original and its retry are inserted at once, then one of them is stored', async () => {
          const results = await Promise.all([
            store.insertItems([window(1)]),
            store.insertItems([window(2)]),
          ]);

          expect(results.reduce((n, result) => n + result.inserted, 0)).toBe(1);
          expect(await store.countRange(everything)).toBe(1);
        });

        it('when items claim nothing of each other, then both are stored, and a stored item shows no claims', async () => {
          expect(await store.insertItems([window(1), window(3)])).toEqual({
            inserted: 2,
            alreadyStored: 0,
          });
          expect(await store.insertItems([window(1)])).toEqual({ inserted: 0, alreadyStored: 1 });
          for (const stored of (await scanAll(everything, 10)).flat()) {
            expect(stored).not.toHaveProperty('claims');
          }
        });

        it('when an item is deleted, then its claims go with it', async () => {
          await store.insertItems([window(1)]);
          await store.deleteByIds(['w1']);

          expect(await store.insertItems([window(2)])).toEqual({ inserted: 1, alreadyStored: 0 });
        });
      });

      it('when the same _id appears twice in one call, then it is stored once', async () => {
        const result = await store.insertItems([buildItem({ _id: 'a' }), buildItem({ _id: 'a' })]);

        expect(result).toEqual({ inserted: 1, alreadyStored: 1 });
        expect(await store.countRange(everything)).toBe(1);
      });

      it('when there is nothing to insert, then nothing is reported', async () => {
        expect(await store.insertItems([])).toEqual({ inserted: 0, alreadyStored: 0 });
      });
    });

    describe('round trip', () => {
      it('when items are stored and scanned, then every field comes back intact', async () => {
        const frame = buildItem({
          _id: 'frame-1',
          device_name: 'laptop-7',
          timestamp: new Date('2026-11-22T10:00:00.123Z'),
          timestamp_source: 'client',
          received_at: new Date('2026-11-22T10:00:01.456Z'),
          file_path: '/data/frames/2026-11-22/10-00-00.mp4',
          app_name: 'Firefox',
          window_name: 'Inbox — Mail',
          ocr_results: [
            {
              text: 'Hello, wörld ✓',
              confidence: 0.87,
              text_json: '[{"text":"Hello"}]',
              ocr_engine: 'tesseract',
              focused: true,
            },
            { text: '', confidence: null, text_json: null, ocr_engine: null, focused: null },
            { text: 'zero', confidence: 0, text_json: null, ocr_engine: 'apple', focused: false },
          ],
          tags: ['work', 'mail'],
          transcription: null,
        });
        const transcription = buildItem({
          _id: 'audio-1',
          content_type: 'transcription',
          timestamp: new Date('2026-11-22T10:00:02.000Z'),
          timestamp_source: 'received',
          received_at: new Date('2026-11-22T10:00:02.000Z'),
          file_path: null,
          app_name: null,
          window_name: null,
          ocr_results: [],
          tags: [],
          transcription: { text: 'let us meet at noon', engine: null },
        });
        await store.insertItems([transcription, frame]);

        const stored = (await scanAll(everything, 10)).flat();

        expect(stored).toEqual([frame, transcription]);
        expect(stored[0]?.timestamp).toBeInstanceOf(Date);
        expect(stored[0]?.timestamp.toISOString()).toBe('2026-11-22T10:00:00.123Z');
        expect(stored[0]?.received_at).toBeInstanceOf(Date);
        expect(stored[1]?.transcription).toEqual({ text: 'let us meet at noon', engine: null });
      });
    });

    describe('scanRange', () => {
      // Five items share t(1), so with chunks of 3 equal timestamps straddle chunk borders.
      const sameTime = ['e', 'a', 'd', 'b', 'c'].map((id) =>
        buildItem({ _id: `s-${id}`, timestamp: t(1) }),
      );
      const others = [
        buildItem({ _id: 'z-0', timestamp: t(0) }),
        buildItem({ _id: 'a-2', timestamp: t(2) }),
        buildItem({ _id: 'b-2', timestamp: t(2) }),
        buildItem({ _id: 'a-3', timestamp: t(3) }),
      ];
      const expectedOrder = ['z-0', 's-a', 's-b', 's-c', 's-d', 's-e', 'a-2', 'b-2', 'a-3'];

      it('when scanning in chunks, then items come ordered by (timestamp, _id), each exactly once', async () => {
        await store.insertItems([...others.slice(2), ...sameTime, ...others.slice(0, 2)]);

        const chunks = await scanAll(everything, 3);

        expect(chunks.map((chunk) => chunk.length)).toEqual([3, 3, 3]);
        expect(ids(chunks.flat())).toEqual(expectedOrder);
      });

      it('when the chunk size does not divide the count, then the last chunk is smaller', async () => {
        await store.insertItems([...sameTime, ...others]);

        for (const chunkSize of [1, 2, 4, 100]) {
          const chunks = await scanAll(everything, chunkSize);

          expect(chunks.every((chunk) => chunk.length > 0 && chunk.length <= chunkSize)).toBe(true);
          expect(ids(chunks.flat())).toEqual(expectedOrder);
        }
      });

      it('when each chunk is deleted after it is read, then the scan still returns every item once', async () => {
        await store.insertItems([...sameTime, ...others]);

        const seen: string[] = [];
        for await (const chunk of store.scanRange(everything, { chunkSize: 2 })) {
          seen.push(...ids(chunk));
          await store.deleteByIds(ids(chunk));
        }

        expect(seen).toEqual(expectedOrder);
        expect(await store.countRange(everything)).toBe(0);
      });

      it('when a range is given, then from is inclusive, to is exclusive and device filters', async () => {
        await store.insertItems([
          buildItem({ _id: 'a0', device_name: 'a', timestamp: t(0) }),
          buildItem({ _id: 'a1', device_name: 'a', timestamp: t(1) }),
          buildItem({ _id: 'a2', device_name: 'a', timestamp: t(2) }),
          buildItem({ _id: 'a3', device_name: 'a', timestamp: t(3) }),
          buildItem({ _id: 'b1', device_name: 'b', timestamp: t(1) }),
          buildItem({ _id: 'b2', device_name: 'b', timestamp: t(2) }),
        ]);

        const cases: Array<[TimeRange, string[]]> = [
          [{ from: t(1), to: t(3) }, ['a1', 'b1', 'a2', 'b2']],
          [{ from: t(1), to: t(3), device: 'a' }, ['a1', 'a2']],
          [{ to: t(2) }, ['a0', 'a1', 'b1']],
          [{ to: t(2), device: 'b' }, ['b1']],
          [{ from: t(3), to: t(4) }, ['a3']],
          [{ from: t(2), to: t(2) }, []],
          [{ from: t(0), to: t(9), device: 'nobody' }, []],
        ];
        for (const [range, expected] of cases) {
          expect(ids((await scanAll(range, 1)).flat())).toEqual(expected);
          expect(await store.countRange(range)).toBe(expected.length);
        }
      });

      it('when nothing is in range, then no chunk is yielded', async () => {
        expect(await scanAll(everything, 5)).toEqual([]);
      });
    });

    describe('deleteByIds', () => {
      it('when ids are given, then only those are deleted and the count is returned', async () => {
        await store.insertItems(['a', 'b', 'c', 'd'].map((_id) => buildItem({ _id })));

        expect(await store.deleteByIds(['b', 'd', 'unknown'])).toBe(2);
        expect(ids((await scanAll(everything, 10)).flat()).sort()).toEqual(['a', 'c']);
        expect(await store.deleteByIds(['b'])).toBe(0);
        expect(await store.deleteByIds([])).toBe(0);
        expect(await store.countRange(everything)).toBe(2);
      });
    });

    describe('deleteRange', () => {
      const seed = () =>
        store.insertItems([
          buildItem({ _id: 'a', timestamp: t(1), file_path: '/v/1.mp4' }),
          buildItem({ _id: 'b', timestamp: t(2), file_path: '/v/1.mp4' }),
          buildItem({
            _id: 'c',
            timestamp: t(3),
            content_type: 'transcription',
            file_path: null,
            ocr_results: [],
            transcription: { text: 'hello there', engine: null },
          }),
          buildItem({ _id: 'd', timestamp: t(4), device_name: 'device-2', file_path: '/v/2.mp4' }),
          buildItem({ _id: 'e', timestamp: t(5), file_path: '/v/3.mp4' }),
        ]);
      const sorted = (counts: Awaited<ReturnType<ContentStore['deleteRange']>>['counts']) =>
        [...counts].sort((x, y) =>
          `${x.device_name}/${x.content_type}`.localeCompare(`${y.device_name}/${y.content_type}`),
        );

      it('when a range is deleted, then its items go (from inclusive, to exclusive) and the answer counts them by device and type with their files', async () => {
        await seed();

        const deleted = await store.deleteRange({ from: t(2), to: t(5) }, { limit: 100 });

        expect(sorted(deleted.counts)).toEqual([
          { device_name: 'device-1', content_type: 'frames', items: 1 },
          { device_name: 'device-1', content_type: 'transcription', items: 1 },
          { device_name: 'device-2', content_type: 'frames', items: 1 },
        ]);
        expect(deleted.filePaths.sort()).toEqual(['/v/1.mp4', '/v/2.mp4']);
        expect(ids((await scanAll(everything, 10)).flat())).toEqual(['a', 'e']);
      });

      it('when a device is named, then only its items go, and no bounds mean all of its time', async () => {
        await seed();

        const deleted = await store.deleteRange({ device: 'device-1' }, { limit: 100 });

        expect(sorted(deleted.counts)).toEqual([
          { device_name: 'device-1', content_type: 'frames', items: 3 },
          { device_name: 'device-1', content_type: 'transcription', items: 1 },
        ]);
        expect(ids((await scanAll(everything, 10)).flat())).toEqual(['d']);
      });

      it('when the range holds more than the limit, then the oldest go first, and repeating empties it', async () => {
        await seed();

        const first = await store.deleteRange({ to: t(10) }, { limit: 2 });
        expect(first.counts).toEqual([
          { device_name: 'device-1', content_type: 'frames', items: 2 },
        ]);
        expect(ids((await scanAll(everything, 10)).flat())).toEqual(['c', 'd', 'e']);
        await store.deleteRange({ to: t(10) }, { limit: 2 });
        const last = await store.deleteRange({ to: t(10) }, { limit: 2 });

        expect(last.counts.reduce((n, c) => n + c.items, 0)).toBe(1);
        expect(await store.countRange(everything)).toBe(0);
      });

      it('when the range is deleted again, then nothing is deleted and nothing is counted', async () => {
        await seed();
        await store.deleteRange({ from: t(1), to: t(3) }, { limit: 100 });

        expect(await store.deleteRange({ from: t(1), to: t(3) }, { limit: 100 })).toEqual({
          counts: [],
          filePaths: [],
        });
        expect(await store.countRange(everything)).toBe(3);
      });

      it('when items are deleted, then search no longer finds them and their paths are no longer in use', async () => {
        await seed();
        const query = {
          terms: ['hello'],
          contentTypes: ['frames', 'transcription'] as ContentDocument['content_type'][],
          order: 'newest' as const,
          limit: 10,
          offset: 0,
        };
        expect((await store.search(query)).total).toBe(1);

        await store.deleteRange({ from: t(3), to: t(4) }, { limit: 100 });
        await store.deleteRange({ device: 'device-2' }, { limit: 100 });

        expect(await store.search(query)).toEqual({ items: [], total: 0 });
        expect(await store.filePathsInUse(['/v/1.mp4', '/v/2.mp4'])).toEqual(new Set(['/v/1.mp4']));
      });
    });

    describe('filePathsInUse', () => {
      it('when some paths are named by stored items, then exactly those come back', async () => {
        await store.insertItems([
          buildItem({ _id: 'a', file_path: '/v/1.mp4' }),
          buildItem({ _id: 'b', file_path: '/v/1.mp4' }),
          buildItem({ _id: 'c', file_path: '/v/2.mp4' }),
        ]);
        await store.deleteByIds(['c']);

        expect(await store.filePathsInUse(['/v/1.mp4', '/v/2.mp4', '/v/3.mp4'])).toEqual(
          new Set(['/v/1.mp4']),
        );
        expect(await store.filePathsInUse([])).toEqual(new Set());
      });
    });

    describe('device counters', () => {
      // Fixed instants: windows are computed against `now`, never the test's clock.
      const at = (iso: string) => new Date(iso);
      const now = at('2026-11-22T10:30:00Z');
      const item = (id: string, time: string, more: Partial<NewContentDocument> = {}) =>
        buildItem({ _id: id, timestamp: at(time), received_at: at(time), ...more });
      const counters = async (query: Partial<Parameters<ContentStore['deviceCounters']>[0]> = {}) =>
        store.deviceCounters({ now, ...query });

      it('when items are stored, then each device counts them by content type with their first and last times', async () => {
        await store.insertItems([
          item('a', '2026-11-22T10:05:00Z'),
          item('b', '2026-11-22T10:07:00Z', { received_at: at('2026-11-22T10:08:00Z') }),
          item('c', '2026-11-22T09:00:00Z', { content_type: 'transcription', file_path: null }),
          item('d', '2026-11-22T10:01:00Z', { device_name: 'device-2' }),
        ]);

        const [one, two] = await counters();

        expect(one).toEqual({
          deviceName: 'device-1',
          byContentType: [
            {
              contentType: 'frames',
              itemsStored: 2,
              firstItemTime: at('2026-11-22T10:05:00Z'),
              lastItemTime: at('2026-11-22T10:07:00Z'),
              firstReceivedAt: at('2026-11-22T10:05:00Z'),
              lastReceivedAt: at('2026-11-22T10:08:00Z'),
              itemsLastHour: 2,
              itemsLast24h: 2,
            },
            expect.objectContaining({ contentType: 'transcription', itemsStored: 1 }),
          ],
          itemsArchived: 0,
          lastArchivedItemTime: null,
        });
        expect(two?.deviceName).toBe('device-2');
        expect(two?.byContentType).toEqual([expect.objectContaining({ itemsStored: 1 })]);
      });

      it('when devices are listed, then each gives its first and latest received batch and newest item per type, sorted by name, the named ones only when named', async () => {
        await store.insertItems([
          item('a', '2026-11-22T10:05:00Z'),
          item('b', '2026-11-22T10:07:00Z', { received_at: at('2026-11-22T10:08:00Z') }),
          item('c', '2026-11-22T09:00:00Z', { content_type: 'transcription', file_path: null }),
          item('d', '2026-11-22T10:01:00Z', { device_name: 'device-2' }),
          item('e', '2026-11-22T10:02:00Z', { device_name: 'Device-0' }),
        ]);

        expect(await store.deviceListing()).toEqual([
          {
            device_name: 'Device-0', // before the lower-case names, as JavaScript sorts
            first_received_ms: at('2026-11-22T10:02:00Z').getTime(),
            last_received_ms: at('2026-11-22T10:02:00Z').getTime(),
            last_frame_ms: at('2026-11-22T10:02:00Z').getTime(),
            last_transcription_ms: null,
          },
          {
            device_name: 'device-1',
            first_received_ms: at('2026-11-22T09:00:00Z').getTime(),
            last_received_ms: at('2026-11-22T10:08:00Z').getTime(),
            last_frame_ms: at('2026-11-22T10:07:00Z').getTime(),
            last_transcription_ms: at('2026-11-22T09:00:00Z').getTime(),
          },
          expect.objectContaining({ device_name: 'device-2' }),
        ]);
        expect(
          (await store.deviceListing(['device-2', 'nobody'])).map((d) => d.device_name),
        ).toEqual(['device-2']);
        expect(await store.deviceListing([])).toEqual([]);
      });

      it('when the newest item times are asked, then each content type gives its newest over every device, or over the named ones, as the listing folds them', async () => {
        expect(await store.newestItemTimes()).toEqual({ frames: null, transcription: null });
        await store.insertItems([
          item('a', '2026-11-22T10:05:00Z'),
          item('b', '2026-11-22T10:07:00Z', { device_name: 'device-2' }),
          item('c', '2026-11-22T09:00:00Z', { content_type: 'transcription', file_path: null }),
          // Received last, but not the newest item: item times decide, not arrival.
          item('d', '2026-11-22T08:00:00Z', {
            device_name: 'device-3',
            received_at: at('2026-11-22T10:30:00Z'),
          }),
        ]);
        const ms = (iso: string) => at(iso).getTime();

        expect(await store.newestItemTimes()).toEqual({
          frames: ms('2026-11-22T10:07:00Z'),
          transcription: ms('2026-11-22T09:00:00Z'),
        });
        expect(await store.newestItemTimes(['device-1', 'device-3', 'nobody'])).toEqual({
          frames: ms('2026-11-22T10:05:00Z'),
          transcription: ms('2026-11-22T09:00:00Z'),
        });
        expect(await store.newestItemTimes(['device-3'])).toEqual({
          frames: ms('2026-11-22T08:00:00Z'),
          transcription: null,
        });
        expect(await store.newestItemTimes([])).toEqual({ frames: null, transcription: null });
        // A read given a deadline it meets answers the same (GET /health's reads carry one).
        expect(await store.newestItemTimes(['device-3'], { timeoutMs: 60_000 })).toEqual({
          frames: ms('2026-11-22T08:00:00Z'),
          transcription: null,
        });
        const listed = await store.deviceListing();
        const newestOf = (field: 'last_frame_ms' | 'last_transcription_ms') =>
          Math.max(...listed.map((d) => d[field] ?? -Infinity));
        expect(await store.newestItemTimes()).toEqual({
          frames: newestOf('last_frame_ms'),
          transcription: newestOf('last_transcription_ms'),
        });

        // A deleted device (delete-device: its items, then its counters) takes its times along.
        await store.deleteRange({ device: 'device-2' }, { limit: 10 });
        await store.forgetDevice('device-2');
        expect((await store.newestItemTimes()).frames).toBe(ms('2026-11-22T10:05:00Z'));
      });

      it('when every item of a device is archived, then it stays listed with its times; a forgotten device leaves the listing, as its counters', async () => {
        await store.insertItems([item('a', '2026-11-22T10:05:00Z')]);
        await store.deleteRange({ device: 'device-1' }, { limit: 10 });
        await store.forgetDevice('device-1');
        await store.insertItems([item('b', '2026-11-22T10:06:00Z', { device_name: 'device-2' })]);
        await store.deleteByIds(['b'], { archived: true });

        const listed = await store.deviceListing();
        expect(listed.map((d) => d.device_name)).toEqual(
          (await counters()).map((d) => d.deviceName),
        );
        expect(listed).toEqual([
          {
            device_name: 'device-2',
            first_received_ms: at('2026-11-22T10:06:00Z').getTime(),
            last_received_ms: at('2026-11-22T10:06:00Z').getTime(),
            last_frame_ms: at('2026-11-22T10:06:00Z').getTime(),
            last_transcription_ms: null,
          },
        ]);
      });

      it('when a batch is stored again (a redelivery), then nothing is counted twice and only new items count', async () => {
        const batch = [item('a', '2026-11-22T10:05:00Z'), item('b', '2026-11-22T10:06:00Z')];
        await store.insertItems(batch);
        await store.insertItems(batch);
        await store.insertItems([...batch, item('c', '2026-11-22T10:07:00Z')]);

        const [device] = await counters({ hoursSince: at('2026-11-22T00:00:00Z') });
        expect(device?.byContentType[0]).toMatchObject({ itemsStored: 3, itemsLastHour: 3 });
        expect(device?.hours).toEqual([{ start: at('2026-11-22T10:00:00Z'), items: 3 }]);
      });

      it('when items fall in the windows, then the last hour and last 24 h count whole buckets and the oldest pro rata', async () => {
        await store.insertItems([
          ...['a', 'b', 'c'].map((id) => item(id, '2026-11-22T10:05:00Z')), // inside both
          ...['d', 'e'].map((id) => item(id, '2026-11-22T09:05:00Z')), // bucket half in the hour
          ...['f', 'g'].map((id) => item(id, '2026-11-21T10:10:00Z')), // bucket half in the 24 h
          ...['h', 'i', 'j', 'k'].map((id) => item(id, '2026-11-21T09:10:00Z')), // before both
        ]);

        const [device] = await counters({ hoursSince: at('2026-11-21T00:00:00Z') });

        expect(device?.byContentType[0]).toMatchObject({
          itemsStored: 11,
          itemsLastHour: 4,
          itemsLast24h: 6,
        });
        expect(device?.hours).toEqual([
          { start: at('2026-11-21T09:00:00Z'), items: 4 },
          { start: at('2026-11-21T10:00:00Z'), items: 2 },
          { start: at('2026-11-22T09:00:00Z'), items: 2 },
          { start: at('2026-11-22T10:00:00Z'), items: 3 },
        ]);
      });

      it('when items are deleted, then they leave the counts; archived ones go to the archive counters', async () => {
        await store.insertItems([
          item('a', '2026-11-22T09:05:00Z'),
          item('b', '2026-11-22T09:06:00Z'),
          item('c', '2026-11-22T10:05:00Z'),
          item('d', '2026-11-22T10:06:00Z'),
        ]);

        expect(await store.deleteByIds(['a', 'b'], { archived: true })).toBe(2);
        expect(await store.deleteByIds(['a', 'b'], { archived: true })).toBe(0); // again: nothing
        expect(await store.deleteByIds(['c'])).toBe(1);

        const [device] = await counters({ hoursSince: at('2026-11-22T00:00:00Z') });
        expect(device).toMatchObject({
          itemsArchived: 2,
          lastArchivedItemTime: at('2026-11-22T09:06:00Z'),
          hours: [{ start: at('2026-11-22T10:00:00Z'), items: 1 }],
        });
        expect(device?.byContentType[0]).toMatchObject({
          itemsStored: 1,
          // Deletes do not move the first/last item times (what the device sent).
          firstItemTime: at('2026-11-22T09:05:00Z'),
          lastItemTime: at('2026-11-22T10:06:00Z'),
        });
      });

      it('when asked for some devices, then only those come back', async () => {
        await store.insertItems([
          item('a', '2026-11-22T10:05:00Z'),
          item('b', '2026-11-22T10:05:00Z', { device_name: 'device-2' }),
          item('c', '2026-11-22T10:05:00Z', { device_name: 'device-3' }),
        ]);

        const found = await counters({ devices: ['device-3', 'device-1', 'unknown'] });

        expect(found.map((d) => d.deviceName)).toEqual(['device-1', 'device-3']);
        expect(await counters({ devices: [] })).toEqual([]);
      });

      it('when a range is deleted, then its devices keep exact counts and the first and last times of the items left; a type left with none has no times', async () => {
        await store.insertItems([
          item('a', '2026-11-22T08:10:00Z'),
          item('b', '2026-11-22T09:20:00Z'),
          item('c', '2026-11-22T10:05:00Z'),
          item('t', '2026-11-22T09:30:00Z', { content_type: 'transcription', file_path: null }),
          item('x', '2026-11-22T08:00:00Z', { device_name: 'device-2' }),
        ]);
        const frames = async () => (await counters())[0]?.byContentType[0];

        await store.deleteRange(
          { to: at('2026-11-22T09:00:00Z'), device: 'device-1' },
          { limit: 10 },
        );
        expect(await frames()).toMatchObject({
          itemsStored: 2,
          firstItemTime: at('2026-11-22T09:20:00Z'),
          lastItemTime: at('2026-11-22T10:05:00Z'),
          firstReceivedAt: at('2026-11-22T08:10:00Z'), // when batches came: kept
        });

        await store.deleteRange({ from: at('2026-11-22T10:00:00Z') }, { limit: 10 });
        expect(await frames()).toMatchObject({
          itemsStored: 1,
          firstItemTime: at('2026-11-22T09:20:00Z'),
          lastItemTime: at('2026-11-22T09:20:00Z'),
        });

        await store.deleteRange(
          { from: at('2026-11-22T09:00:00Z'), to: at('2026-11-22T10:00:00Z') },
          { limit: 10 },
        );
        const [device, other] = await counters({ hoursSince: at('2026-11-22T00:00:00Z') });
        expect(device?.byContentType).toEqual([
          expect.objectContaining({ itemsStored: 0, firstItemTime: null, lastItemTime: null }),
          expect.objectContaining({ itemsStored: 0, firstItemTime: null, lastItemTime: null }),
        ]);
        expect(device?.hours).toEqual([]);
        expect(other?.byContentType[0]).toMatchObject({
          itemsStored: 1,
          firstItemTime: at('2026-11-22T08:00:00Z'),
        });
      });

      it('when a device is forgotten after its items were deleted, then it is gone; items it stored since the last delete stay counted', async () => {
        await store.insertItems([
          item('a', '2026-11-22T10:05:00Z'),
          item('b', '2026-11-22T10:06:00Z'),
          item('c', '2026-11-22T10:05:00Z', { device_name: 'device-2' }),
        ]);
        await store.deleteByIds(['a'], { archived: true });
        await store.deleteRange({ device: 'device-1' }, { limit: 10 });
        await store.forgetDevice('device-1');
        expect((await counters()).map((d) => d.deviceName)).toEqual(['device-2']);

        await store.insertItems([item('d', '2026-11-22T10:07:00Z')]);
        await store.deleteRange({ device: 'device-1' }, { limit: 10 });
        await store.insertItems([item('e', '2026-11-22T10:20:00Z')]); // sent meanwhile
        await store.forgetDevice('device-1');

        const [device] = await counters({ devices: ['device-1'] });
        expect(device).toMatchObject({ itemsArchived: 0 });
        expect(device?.byContentType).toEqual([
          expect.objectContaining({
            itemsStored: 1,
            firstItemTime: at('2026-11-22T10:20:00Z'),
            lastItemTime: at('2026-11-22T10:20:00Z'),
            itemsLastHour: 1,
          }),
        ]);
      });

      it('when an archive chunk holds 500 items of 500 hours of 50 devices, then its delete completes and every counter is right (never 100 upserts of existing documents in one command: they wedge FerretDB 1.24)', async () => {
        const hour = (i: number) => new Date(Date.UTC(2026, 9, 1) + i * 3_600_000).toISOString();
        const docs = Array.from({ length: 500 }, (_, i) =>
          item(`h${i}`, hour(i), { device_name: `device-${i % 50}` }),
        );
        await store.insertItems(docs);

        expect(
          await store.deleteByIds(
            docs.map((doc) => doc._id),
            { archived: true },
          ),
        ).toBe(500);

        const all = await counters({ hoursSince: at('2026-01-01T00:00:00Z') });
        expect(all).toHaveLength(50);
        for (const device of all) {
          expect(device).toMatchObject({ itemsArchived: 10, hours: [] });
          expect(device.byContentType[0]).toMatchObject({ itemsStored: 0 });
        }
      }, 60_000);

      it('when archived items are restored, then they leave the archive counters, once', async () => {
        await store.insertItems([
          item('a', '2026-11-22T10:05:00Z'),
          item('b', '2026-11-22T10:06:00Z'),
        ]);
        await store.deleteByIds(['a', 'b'], { archived: true });

        expect(
          await store.insertItems([item('a', '2026-11-22T10:05:00Z')], { restored: true }),
        ).toEqual({
          inserted: 1,
          alreadyStored: 0,
        });
        await store.insertItems([item('a', '2026-11-22T10:05:00Z')], { restored: true }); // again

        const [device] = await counters();
        expect(device).toMatchObject({ itemsArchived: 1 });
        expect(device?.byContentType[0]).toMatchObject({ itemsStored: 1 });
        await store.deleteByIds(['a'], { archived: true }); // archived again: counted once
        expect((await counters())[0]).toMatchObject({ itemsArchived: 2 });
      });
    });

    describe('ensureIndexes', () => {
      it('when called again, then it succeeds and the store still works', async () => {
        await store.ensureIndexes();
        await store.ensureIndexes();

        expect(await store.insertItems([buildItem({ _id: 'a' })])).toEqual({
          inserted: 1,
          alreadyStored: 0,
        });
      });
    });
  });
}

const epoch = Date.parse('2026-11-22T10:00:00.000Z');
/** The n-th second after a fixed instant. */
export const t = (n: number) => new Date(epoch + n * 1000);

/** A small frames item; tests override what they look at. */
export function buildItem(
  overrides: Partial<NewContentDocument> & Pick<ContentDocument, '_id'>,
): NewContentDocument {
  return {
    device_name: 'device-1',
    content_type: 'frames',
    timestamp: t(0),
    timestamp_source: 'client',
    received_at: t(0),
    file_path: `/frames/${overrides._id}.mp4`,
    app_name: 'Terminal',
    window_name: 'bash',
    ocr_results: [
      { text: 'ls -la', confidence: 0.9, text_json: null, ocr_engine: 'tesseract', focused: true },
    ],
    tags: ['screen'],
    transcription: null,
    ...overrides,
  };
}
