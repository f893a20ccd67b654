import { randomBytes } from 'node:crypto';
import { ValidationError } from '@screenfleet/contracts';
import {
  ContentRejectedError,
  MAX_AUDIT_PAGE,
  type AuditQuery,
  type AuditRow,
  type AuditStore,
} from '@screenfleet/storage';
import { rejection, storesPerTest } from './contract-support';

/** What an adapter's test file hands the contract: one empty place, opened as often as needed. */
export interface AuditStoreFixture {
  /** A new store (its own connection) over the same place: a second worker. */
  open(): AuditStore;
  /** Removes everything the place holds. */
  cleanup(): Promise<void>;
}

const run = randomBytes(4).toString('hex');
const at = (seconds: number) => new Date(Date.UTC(2026, 10, 29, 9, 0, 0, 0) + seconds * 1000);

let made = 0;
/** Ids of one length that sort (binary, as every store compares them) in the order made. */
export function buildAuditRow(overrides: Partial<AuditRow> = {}): AuditRow {
  made += 1;
  return {
    id: `aud_${run}_${made.toString().padStart(6, '0')}`,
    at: at(made % 600),
    actor: 'tok_00000000000000aa',
    action: 'operator.press',
    device: 'office-1',
    outcome: 'ok',
    outcomeCode: null,
    durationMs: 42,
    details: { element: 3, key: 'Enter', modifiers: [] },
    ...overrides,
  };
}

/** What a query must answer, worked out here: every filter, newest first, ties by id. */
function expected(rows: AuditRow[], query: Omit<AuditQuery, 'limit' | 'cursor'>): AuditRow[] {
  return rows
    .filter(
      (row) =>
        (query.device === undefined || row.device === query.device) &&
        (query.actor === undefined || row.actor === query.actor) &&
        (query.action === undefined || row.action === query.action) &&
        (!query.from || row.at.getTime() >= query.from.getTime()) &&
        (!query.to || row.at.getTime() < query.to.getTime()),
    )
    .sort(newestFirst);
}

function newestFirst(a: AuditRow, b: AuditRow): number {
  return b.at.getTime() - a.at.getTime() || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0);
}

/** Every page of a query, following nextCursor; `between` runs after each page. */
async function allPages(
  store: AuditStore,
  query: AuditQuery,
  between: (page: number) => Promise<void> = () => Promise.resolve(),
): Promise<AuditRow[][]> {
  const pages: AuditRow[][] = [];
  let cursor: string | undefined;
  do {
    const page = await store.query({ ...query, ...(cursor === undefined ? {} : { cursor }) });
    pages.push(page.rows);
    cursor = page.nextCursor ?? undefined;
    await between(pages.length);
    if (pages.length > 100) throw new Error('paging does not end');
  } while (cursor !== undefined);
  return pages;
}

/**
 * What every AuditStore adapter must do (the port's doc comments in src/audit-store.ts are the
 * contract). `makeFixture` returns an empty place each time.
 */
export function describeAuditStoreContract(
  name: string,
  makeFixture: () => Promise<AuditStoreFixture>,
): void {
  describe(`AuditStore contract: ${name}`, () => {
    const { open } = storesPerTest(makeFixture);

    it('when rows are inserted, then another connection reads every field back intact, Dates as Dates and details as given', async () => {
      const store = open();
      await store.ensureSchema();
      const rows = [
        buildAuditRow({
          at: new Date('2026-11-29T08:00:00.001Z'),
          action: 'operator.type',
          durationMs: 12.5,
          details: {
            element: 0,
            text: 'grüße, "quoted" \\ 😀',
            modifiers: ['ctrl', 'shift'],
            nested: { counts: [1, 2.25, -3], flag: true, none: null },
          },
        }),
        buildAuditRow({
          at: new Date('2026-11-29T08:00:00.999Z'),
          actor: 'local',
          action: 'operator.click',
          outcome: 'failed',
          outcomeCode: 'device_unavailable',
          durationMs: 3000,
        }),
        buildAuditRow({
          at: new Date('2026-11-28T23:59:59.000Z'),
          action: 'token.revoke',
          device: null,
          outcome: 'refused',
          outcomeCode: 'forbidden',
          durationMs: null,
          details: {},
        }),
      ];

      expect(await store.insertRows(rows)).toEqual({ inserted: 3, alreadyStored: 0 });
      const page = await open().query({ limit: 10 });

      expect(page).toEqual({ rows: [rows[1], rows[0], rows[2]], nextCursor: null });
      for (const row of page.rows) expect(row.at).toBeInstanceOf(Date);
      await open().ensureSchema(); // again, on another connection: idempotent
    });

    it('when nothing is stored or nothing is given, then a query answers an empty last page and an insert stores nothing', async () => {
      const store = open();
      expect(await store.query({ limit: 5 })).toEqual({ rows: [], nextCursor: null });
      expect(await store.insertRows([])).toEqual({ inserted: 0, alreadyStored: 0 });
      expect(await store.deleteOlderThan(at(1_000), { limit: 5 })).toBe(0);
    });

    it('when the same ids are inserted again (in a later call, twice in one call, on another connection), then each is stored once and the first stays', async () => {
      const store = open();
      const [a, b, c] = [buildAuditRow(), buildAuditRow(), buildAuditRow()];
      await store.insertRows([a, b]);

      const again = await open().insertRows([
        { ...a, outcome: 'failed', details: { changed: true } },
        c,
        c,
        b,
      ]);

      expect(again).toEqual({ inserted: 1, alreadyStored: 3 });
      expect((await store.query({ limit: 10 })).rows).toEqual([a, b, c].sort(newestFirst));
    });

    it('when a batch holds a row with an invalid time or a duration that is not finite, then it is refused ContentRejectedError and nothing of it is stored', async () => {
      const store = open();
      const good = buildAuditRow();

      for (const bad of [
        buildAuditRow({ at: new Date(Number.NaN) }),
        buildAuditRow({ durationMs: Number.POSITIVE_INFINITY }),
      ]) {
        const error = await rejection(store.insertRows([good, bad]));
        expect(error).toBeInstanceOf(ContentRejectedError);
        expect((error as Error).message).toContain(bad.id);
      }
      expect(await store.query({ limit: 10 })).toEqual({ rows: [], nextCursor: null });
    });

    it('when 2 connections insert the same 20 rows at once, then each row is stored once and each is counted inserted once', async () => {
      const [a, b] = [open(), open()];
      await a.ensureSchema();
      const rows = Array.from({ length: 20 }, () => buildAuditRow());

      const [first, second] = await Promise.all([
        a.insertRows(rows),
        b.insertRows([...rows].reverse()),
      ]);

      expect(first.inserted + second.inserted).toBe(20);
      expect(first.alreadyStored + second.alreadyStored).toBe(20);
      expect((await a.query({ limit: 50 })).rows).toEqual([...rows].sort(newestFirst));
    });

    describe('filters', () => {
      // 3 devices (one none), 3 actors, 3 actions, times over 24 s, some sharing a second.
      const devices = ['office-1', 'office-2', null];
      const actors = ['tok_00000000000000aa', 'tok_00000000000000bb', 'local'];
      const actions = ['operator.press', 'operator.click', 'token.create'];
      const rows = Array.from({ length: 36 }, (_, i) =>
        buildAuditRow({
          at: at(Math.floor(i / 3) * 2),
          device: devices[i % 3]!,
          actor: actors[Math.floor(i / 3) % 3]!,
          action: actions[Math.floor(i / 9) % 3]!,
        }),
      );
      const queries: Array<Omit<AuditQuery, 'limit'>> = [
        {},
        { device: 'office-1' },
        { device: 'office-2' },
        { device: 'nowhere' },
        { actor: 'local' },
        { actor: 'tok_00000000000000bb' },
        { action: 'operator.click' },
        { action: 'token.create' },
        { from: at(10) },
        { to: at(10) },
        { from: at(4), to: at(16) },
        { from: at(4), to: at(4) },
        { device: 'office-2', actor: 'tok_00000000000000aa' },
        { device: 'office-1', action: 'operator.press', from: at(2) },
        { actor: 'local', action: 'operator.click', from: at(0), to: at(22) },
        {
          device: 'office-1',
          actor: 'tok_00000000000000bb',
          action: 'operator.press',
          from: at(0),
          to: at(100),
        },
      ];

      it('when each filter is given alone or with others, then exactly the matching rows come back, newest first', async () => {
        const store = open();
        await store.insertRows(rows);

        for (const query of queries) {
          const want = expected(rows, query);
          const page = await store.query({ ...query, limit: 100 });
          expect({ query, ids: page.rows.map((row) => row.id) }).toEqual({
            query,
            ids: want.map((row) => row.id),
          });
          expect(page.rows).toEqual(want);
          expect(page.nextCursor).toBeNull();
        }
        // Every filter value above matches something, bar the device of none.
        expect(expected(rows, { action: 'token.create' }).length).toBeGreaterThan(0);
      });

      it('when filtered queries are paged by 4, then the pages add up to the unpaged answer', async () => {
        const store = open();
        await store.insertRows(rows);

        for (const query of queries) {
          const pages = await allPages(store, { ...query, limit: 4 });
          expect(pages.flat().map((row) => row.id)).toEqual(
            expected(rows, query).map((row) => row.id),
          );
          for (const page of pages.slice(0, -1)) expect(page).toHaveLength(4);
        }
      });
    });

    it('when rows share a time, then newest first orders them by id descending, also across page borders', async () => {
      const store = open();
      const same = at(30);
      const rows = [
        buildAuditRow({ at: same }),
        buildAuditRow({ at: at(31) }),
        buildAuditRow({ at: same }),
        buildAuditRow({ at: same }),
        buildAuditRow({ at: at(29) }),
        buildAuditRow({ at: same }),
      ];
      await store.insertRows([...rows].reverse());

      const pages = await allPages(store, { limit: 2 });

      expect(pages.map((page) => page.map((row) => row.id))).toEqual([
        [rows[1]!.id, rows[5]!.id],
        [rows[3]!.id, rows[2]!.id],
        [rows[0]!.id, rows[4]!.id],
      ]);
    });

    it('when 25 rows are paged by 10 while rows are inserted between pages, then every row comes exactly once and newer ones never', async () => {
      const store = open();
      const writer = open();
      const rows = Array.from({ length: 25 }, (_, i) => buildAuditRow({ at: at(100 + i) }));
      await store.insertRows(rows);
      const newer: AuditRow[] = [];
      const older: AuditRow[] = [];

      const pages = await allPages(store, { limit: 10 }, async (page) => {
        // Newer than everything read, and older than everything: only the older ones follow.
        const batch = [buildAuditRow({ at: at(500 + page) }), buildAuditRow({ at: at(page) })];
        newer.push(batch[0]!);
        older.push(batch[1]!);
        await writer.insertRows(batch);
      });

      const read = pages.flat().map((row) => row.id);
      expect(new Set(read).size).toBe(read.length);
      expect(read.slice(0, 25)).toEqual([...rows].sort(newestFirst).map((row) => row.id));
      for (const row of newer) expect(read).not.toContain(row.id);
      // The older rows inserted before the last page was read come in it, oldest last.
      expect(read.slice(25)).toEqual(
        older
          .slice(0, pages.length - 1)
          .sort(newestFirst)
          .map((row) => row.id),
      );
      expect(pages.map((page) => page.length)).toEqual([10, 10, 7]);
    });

    it('when a row is inserted at the same time as the last row of a page, then it comes after that page only if its id sorts lower', async () => {
      const store = open();
      const rows = Array.from({ length: 4 }, () => buildAuditRow({ at: at(50) }));
      const [low, middle, high] = [
        { ...rows[0]!, id: `${rows[0]!.id}_a` },
        { ...rows[1]!, id: `${rows[1]!.id}_a` },
        { ...rows[3]!, id: `${rows[3]!.id}_z` },
      ];
      await store.insertRows([rows[1]!, rows[2]!, rows[3]!]);

      const first = await store.query({ limit: 2 }); // rows 3 and 2
      expect(first.rows.map((row) => row.id)).toEqual([rows[3]!.id, rows[2]!.id]);
      await store.insertRows([low, middle, high]);
      const second = await store.query({ limit: 10, cursor: first.nextCursor! });

      expect(second.rows.map((row) => row.id)).toEqual([middle.id, rows[1]!.id, low.id]);
    });

    it('when a cursor is not one of nextCursor, or a limit is out of range, then the query is refused', async () => {
      const store = open();
      await store.insertRows([buildAuditRow()]);

      const badCursor = await rejection(store.query({ limit: 5, cursor: 'nonsense' }));
      expect(badCursor).toBeInstanceOf(ValidationError);
      for (const limit of [0, MAX_AUDIT_PAGE + 1, 2.5]) {
        expect(await rejection(store.query({ limit }))).toBeInstanceOf(RangeError);
      }
      expect(await rejection(store.deleteOlderThan(at(1), { limit: 0 }))).toBeInstanceOf(
        RangeError,
      );
      expect((await store.query({ limit: MAX_AUDIT_PAGE })).rows).toHaveLength(1);
    });

    it('when rows older than a cutoff are deleted in chunks of 3, then the oldest go first, each chunk at most 3, and rows at or after the cutoff stay', async () => {
      const store = open();
      const cutoff = at(200);
      const old = Array.from({ length: 7 }, (_, i) => buildAuditRow({ at: at(190 + i) }));
      const justBefore = buildAuditRow({ at: new Date(cutoff.getTime() - 1) });
      const atCutoff = buildAuditRow({ at: cutoff });
      const kept = [atCutoff, buildAuditRow({ at: at(201) }), buildAuditRow({ at: at(5_000) })];
      await store.insertRows([...kept, justBefore, ...old]);

      const first = await store.deleteOlderThan(cutoff, { limit: 3 });
      const left = (await store.query({ limit: 100 })).rows;
      expect(first).toBe(3);
      expect(left.map((row) => row.id)).toEqual(
        [...kept, justBefore, ...old.slice(3)].sort(newestFirst).map((row) => row.id),
      );

      const other = open();
      const chunks = [first];
      for (let i = 0; i < 3; i++) chunks.push(await other.deleteOlderThan(cutoff, { limit: 3 }));

      expect(chunks).toEqual([3, 3, 2, 0]);
      expect((await store.query({ limit: 100 })).rows).toEqual([...kept].sort(newestFirst));
    });
  });
}
