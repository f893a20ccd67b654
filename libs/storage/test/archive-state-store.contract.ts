import type { ArchiveStateStore } from '@screenfleet/storage';
import { initialArchiveState, type ArchiveState } from '@screenfleet/contracts';
import { storesPerTest } from './contract-support';

/** What an adapter's test file hands the contract: one empty place, opened as often as needed. */
export interface ArchiveStateStoreFixture {
  /** A new store (its own connection) over the same place: a second worker. */
  open(): ArchiveStateStore;
  /** Removes everything the place holds. */
  cleanup(): Promise<void>;
}

/** A full state: a never-run archive's, with `overrides`. */
export function buildState(overrides: Partial<ArchiveState> = {}): ArchiveState {
  const settings = { enabled: true, retention_days: 30, storage_limit: 10 * 1024 ** 3 };
  return {
    ...initialArchiveState(settings, new Date('2026-11-23T00:00:00.000Z')),
    ...overrides,
  };
}

const at = (seconds: number) => new Date(Date.UTC(2026, 10, 23, 12, 0, seconds));

/**
 * What every ArchiveStateStore adapter must do (the port's doc comments in
 * src/archive-state-store.ts are the contract). `makeFixture` returns an empty place each time.
 */
export function describeArchiveStateStoreContract(
  name: string,
  makeFixture: () => Promise<ArchiveStateStoreFixture>,
): void {
  describe(`ArchiveStateStore contract: ${name}`, () => {
    const { open } = storesPerTest(makeFixture);

    describe('state', () => {
      it('when nothing is stored, then load stores the initial state and returns it', async () => {
        const store = open();
        const initial = buildState();

        expect(await store.load(initial)).toEqual(initial);
        expect(await open().load(buildState({ failures: 99 }))).toEqual(initial);
      });

      it('when a state was saved, then load returns it and not the initial one', async () => {
        const store = open();
        await store.load(buildState());
        const saved = buildState({ last_error: 'MinIO unreachable', failures: 3 });
        await store.save(saved);

        expect(await open().load(buildState())).toEqual(saved);
      });

      it('when every field is set (Dates, nulls, big numbers), then each comes back intact, Dates as Dates', async () => {
        const store = open();
        await store.load(buildState());
        const full = buildState({
          settings: { enabled: false, retention_days: 7, storage_limit: 5 * 1024 ** 4 },
          initialised_at: at(1),
          watermark: { timestamp: new Date('2026-10-01T08:30:00.123Z'), id: 'item-00042' },
          last_cleanup: at(2),
          last_error: 'storage limit reached: next chunk 1.2 MB would pass 5 TB',
          storage_used: 4.5 * 1024 ** 4,
          counters: {
            chunks_uploaded: 1234,
            items_archived: 3_000_000_000,
            media_files_uploaded: 7,
          },
          failures: 2,
          cleanup_pending: {
            chunk_key: 'chunks/2026/10/01/chunk-1.jsonl.gz',
            archived_at: at(2),
            item_ids: ['item-00041', 'item-00042'],
            media_paths: ['/media/a.png'],
          },
          media_files_pending: 3,
          uploading_since: at(4),
          run_requested_at: at(5),
          updated_at: at(3),
          sealed_with: ['plain', '0123456789abcdef'],
        });
        await store.save(full);

        const loaded = await open().load(buildState());

        expect(loaded).toEqual(full);
        expect(loaded.watermark?.timestamp).toBeInstanceOf(Date);
        expect(loaded.watermark?.timestamp.toISOString()).toBe('2026-10-01T08:30:00.123Z');
        expect(loaded.last_cleanup).toBeInstanceOf(Date);
        expect(loaded.initialised_at).toBeInstanceOf(Date);
        expect(loaded.updated_at).toBeInstanceOf(Date);

        // And back to nulls: nulls are stored, not dropped.
        const cleared = buildState({ watermark: null, last_error: null, last_cleanup: null });
        await store.save(cleared);
        expect(await open().load(buildState({ last_error: 'initial' }))).toEqual(cleared);
      });

      it('when the state has a field the port does not know yet, then it persists too', async () => {
        const store = open();
        const extended = { ...buildState(), next_run_at: at(9), notes: { by: 'a later version' } };

        await store.save(extended);

        expect(await open().load(buildState())).toEqual(extended);
      });

      it('when deleted ranges are recorded one update after another, then they come back in order with their Dates and nulls', async () => {
        const store = open();
        await store.load(buildState());
        const first = { from: at(1), to: at(2), device_name: 'MacBook Pro', deleted_at: at(3) };
        const second = { from: null, to: null, device_name: 'laptop', deleted_at: at(4) };
        await store.update({ deleted_ranges: [first] });
        await store.update({ deleted_ranges: [first, second] });

        const loaded = await open().load(buildState());
        expect(loaded.deleted_ranges).toEqual([first, second]);
        expect(loaded.deleted_ranges![0]!.from).toBeInstanceOf(Date);
        expect(loaded.deleted_ranges![1]!.deleted_at).toBeInstanceOf(Date);
      });

      it('when save comes before any load, then it is stored', async () => {
        const saved = buildState({ failures: 5 });
        await open().save(saved);

        expect(await open().load(buildState())).toEqual(saved);
      });

      it('when fields are updated, then only those change and the rest stays as stored', async () => {
        const store = open();
        await store.load(buildState({ last_error: 'kept', run_requested_at: at(1) }));

        await store.update({
          settings: { enabled: false, retention_days: 3, storage_limit: 99 },
          watermark: { timestamp: at(7), id: 'item-7' },
          last_error: null,
          storage_used: undefined,
        });

        expect(await open().load(buildState())).toEqual(
          buildState({
            settings: { enabled: false, retention_days: 3, storage_limit: 99 },
            watermark: { timestamp: at(7), id: 'item-7' },
            last_error: null,
            run_requested_at: at(1),
          }),
        );
      });

      it('when two workers update different fields at once, then both changes survive', async () => {
        const [a, b] = [open(), open()];
        await a.load(buildState());
        const settings = { enabled: false, retention_days: 1, storage_limit: 5 };

        for (let round = 1; round <= 5; round += 1) {
          await Promise.all([
            a.update({ settings: { ...settings, retention_days: round } }),
            b.update({
              counters: {
                chunks_uploaded: round,
                items_archived: round * 10,
                media_files_uploaded: 0,
              },
              storage_used: round * 100,
              updated_at: at(round),
            }),
          ]);
          const loaded = await open().load(buildState());
          expect(loaded.settings.retention_days).toBe(round);
          expect(loaded.counters.chunks_uploaded).toBe(round);
          expect(loaded.storage_used).toBe(round * 100);
          expect(loaded.updated_at).toEqual(at(round));
        }
      });

      it('when a whole state is saved after updates, then load returns exactly the saved state', async () => {
        const store = open();
        await store.load(buildState());
        await store.update({ failures: 4, last_error: 'updated' });
        const saved = buildState({ storage_used: 12 });

        await store.save(saved);

        expect(await open().load(buildState())).toEqual(saved);
      });

      it('when nothing is stored yet, then update rejects and stores nothing', async () => {
        await expect(open().update({ failures: 1 })).rejects.toThrow();

        expect(await open().load(buildState())).toEqual(buildState());
      });

      it('when two workers load at once on an empty place, then both get the same stored state', async () => {
        const [a, b] = [open(), open()];
        const [fromA, fromB] = await Promise.all([
          a.load(buildState({ last_error: 'from a' })),
          b.load(buildState({ last_error: 'from b' })),
        ]);

        expect(fromA).toEqual(fromB);
        expect(['from a', 'from b']).toContain(fromA.last_error);
        expect(await open().load(buildState())).toEqual(fromA);
      });
    });

    describe('lease', () => {
      const ttl = 10_000;

      it('when the lease is free, then a worker acquires it and another is refused while it holds it', async () => {
        const [a, b] = [open(), open()];

        expect(await a.acquireLease('a', ttl, at(0))).toBe(true);
        expect(await b.acquireLease('b', ttl, at(5))).toBe(false);
        expect(await b.acquireLease('b', ttl, at(10))).toBe(false); // expires_at is not yet past
      });

      it('when the holder renews, then it keeps the lease past the first expiry', async () => {
        const [a, b] = [open(), open()];
        await a.acquireLease('a', ttl, at(0));

        expect(await a.acquireLease('a', ttl, at(8))).toBe(true);

        expect(await b.acquireLease('b', ttl, at(15))).toBe(false);
        expect(await b.acquireLease('b', ttl, at(17))).toBe(false); // renewed until at(18)
      });

      it('when the lease has expired, then another worker takes it over and the old holder is refused', async () => {
        const [a, b] = [open(), open()];
        await a.acquireLease('a', ttl, at(0));

        expect(await b.acquireLease('b', ttl, at(11))).toBe(true);
        expect(await a.acquireLease('a', ttl, at(12))).toBe(false);
      });

      it('when the holder releases, then another worker takes it at once', async () => {
        const [a, b] = [open(), open()];
        await a.acquireLease('a', ttl, at(0));

        await a.releaseLease('a');

        expect(await b.acquireLease('b', ttl, at(1))).toBe(true);
        expect(await a.acquireLease('a', ttl, at(2))).toBe(false);
      });

      it('when a worker that does not hold the lease releases, then nothing changes', async () => {
        const [a, b] = [open(), open()];
        await a.acquireLease('a', ttl, at(0));

        await b.releaseLease('b');
        await b.releaseLease('b'); // and with nothing held, harmless twice

        expect(await b.acquireLease('b', ttl, at(1))).toBe(false);
        expect(await a.acquireLease('a', ttl, at(2))).toBe(true);
      });

      it('when the lease is renewed many times, then it still works (old terms are pruned safely)', async () => {
        const [a, b] = [open(), open()];
        for (let i = 0; i < 30; i += 1) expect(await a.acquireLease('a', ttl, at(i))).toBe(true);

        expect(await b.acquireLease('b', ttl, at(35))).toBe(false);
        expect(await b.acquireLease('b', ttl, at(40))).toBe(true);
      });

      async function raceOf(contenders: number, now: Date): Promise<string[]> {
        const clients = [open(), open()];
        const results = await Promise.all(
          Array.from({ length: contenders }, (_, i) =>
            clients[i % 2]!.acquireLease(`w${i}`, ttl, now).then((won) => (won ? `w${i}` : null)),
          ),
        );
        return results.filter((winner): winner is string => winner !== null);
      }

      it('when 10 workers on 2 connections acquire a free lease at once, then exactly one wins', async () => {
        const winners = await raceOf(10, at(0));

        expect(winners).toHaveLength(1);
        expect(await open().acquireLease('late', ttl, at(1))).toBe(false);
      });

      it('when 10 workers on 2 connections take over an expired lease at once, then exactly one wins', async () => {
        await open().acquireLease('old', ttl, at(0));

        const winners = await raceOf(10, at(20));

        expect(winners).toHaveLength(1);
        expect(await open().acquireLease(winners[0]!, ttl, at(21))).toBe(true);
        expect(await open().acquireLease('old', ttl, at(22))).toBe(false);
      });

      it('when one worker holds the worker lease, then the task lease is another: a second worker takes it, and each is exclusive', async () => {
        const [a, b] = [open(), open()];

        expect(await a.acquireLease('a', ttl, at(0))).toBe(true);
        expect(await b.acquireLease('restore b', ttl, at(1), 'task')).toBe(true);

        expect(await a.acquireLease('pass a', ttl, at(2), 'task')).toBe(false);
        expect(await b.acquireLease('b', ttl, at(2))).toBe(false);
        await b.releaseLease('restore b', 'task');
        expect(await a.acquireLease('pass a', ttl, at(3), 'task')).toBe(true);
        expect(await a.acquireLease('a', ttl, at(4))).toBe(true); // the worker lease is still a's
      });

      it('when a lease is held, then leaseHolder names its holder until it is released or expires; null when free', async () => {
        const [a, b] = [open(), open()];
        expect(await b.leaseHolder(at(0), 'task')).toBeNull();
        expect(await b.leaseHolder(at(0))).toBeNull();

        await a.acquireLease('pass a', ttl, at(0), 'task');
        await a.acquireLease('a', ttl, at(0));

        expect(await b.leaseHolder(at(5), 'task')).toBe('pass a');
        expect(await b.leaseHolder(at(5))).toBe('a');
        expect(await b.leaseHolder(at(11), 'task')).toBeNull(); // expired
        await a.releaseLease('a');
        expect(await b.leaseHolder(at(6))).toBeNull();
      });

      it('when 10 workers on 2 connections race for the task lease, then exactly one wins, and the worker lease stays free', async () => {
        const clients = [open(), open()];
        const results = await Promise.all(
          Array.from({ length: 10 }, (_, i) =>
            clients[i % 2]!.acquireLease(`task ${i}`, ttl, at(0), 'task'),
          ),
        );

        expect(results.filter(Boolean)).toHaveLength(1);
        expect(await open().acquireLease('w', ttl, at(1))).toBe(true);
      });

      it('when 10 workers race a released lease, repeatedly, then each round has exactly one winner', async () => {
        for (let round = 0; round < 5; round += 1) {
          const winners = await raceOf(10, at(round));
          expect(winners).toHaveLength(1);
          await open().releaseLease(winners[0]!);
        }
      });
    });
  });
}
