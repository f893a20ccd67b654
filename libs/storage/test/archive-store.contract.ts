import { createHash } from 'node:crypto';
import { NotFoundError, StoreUnavailableError, ValidationError } from '@screenfleet/contracts';
import { ChecksumMismatchError, type ArchiveObject, type ArchiveStore } from '@screenfleet/storage';
import { rejection } from './contract-support';

/** What an adapter's test file hands the contract: an empty store and ways to misuse it. */
export interface ArchiveStoreFixture {
  store: ArchiveStore;
  /** Replaces the stored bytes of `key` behind the store's back (as bit rot or a rogue writer). */
  tamper(key: string, body: Buffer): Promise<void>;
  /**
   * Makes the store unreachable; the returned function makes it reachable again. Not called when
   * the contract is given `canBreak: false`.
   */
  breakStore(): Promise<() => Promise<void>>;
  /** Removes everything the store holds. */
  cleanup(): Promise<void>;
}

export const sha256Hex = (body: Buffer) => createHash('sha256').update(body).digest('hex');

/** Puts `body` under `key` with its correct checksum. */
export async function putObject(store: ArchiveStore, key: string, body: Buffer): Promise<void> {
  await store.put(key, body, { sha256: sha256Hex(body) });
}

async function listAll(store: ArchiveStore, prefix: string): Promise<ArchiveObject[]> {
  const objects: ArchiveObject[] = [];
  for await (const object of store.list(prefix)) objects.push(object);
  return objects;
}

const escapingKeys = [
  '../outside',
  'a/../../outside',
  'a/./b',
  '/etc/passwd',
  'a\\..\\..\\outside',
  'a\u0000b',
  '',
  'a//b',
  'a/',
  '.hidden',
];

/**
 * What every ArchiveStore adapter must do, whatever its technology (the port's doc comments in
 * src/archive-store.ts are the contract). `makeFixture` returns an empty store each time.
 */
export function describeArchiveStoreContract(
  name: string,
  makeFixture: () => Promise<ArchiveStoreFixture>,
  options: { canBreak?: boolean } = {},
): void {
  describe(`ArchiveStore contract: ${name}`, () => {
    let fixture: ArchiveStoreFixture;
    let store: ArchiveStore;

    beforeEach(async () => {
      fixture = await makeFixture();
      store = fixture.store;
      await store.ensureReady();
    });

    afterEach(async () => {
      await fixture.cleanup();
      await store.close();
    });

    // Every byte value, so an encoding slip (utf8, base64) would show.
    const binary = Buffer.from(Array.from({ length: 1024 }, (_, i) => (i * 7) % 256));

    describe('put and get', () => {
      it('when an object is put, then get returns exactly its bytes', async () => {
        await putObject(store, 'chunks/2026/11/0001.json.gz', binary);

        expect((await store.get('chunks/2026/11/0001.json.gz')).equals(binary)).toBe(true);
      });

      it('when the body is empty, then an empty object is stored', async () => {
        await putObject(store, 'empty', Buffer.alloc(0));

        expect((await store.get('empty')).length).toBe(0);
        expect(await store.verify('empty', sha256Hex(Buffer.alloc(0)))).toBe(true);
      });

      it('when a key is put again, then the new bytes replace the old', async () => {
        const first = Buffer.from('first version');
        const second = Buffer.from('second, longer version');
        await putObject(store, 'chunks/a', first);

        await putObject(store, 'chunks/a', second);

        expect((await store.get('chunks/a')).equals(second)).toBe(true);
        expect(await store.verify('chunks/a', sha256Hex(second))).toBe(true);
        expect(await store.verify('chunks/a', sha256Hex(first))).toBe(false);
        expect(await listAll(store, '')).toEqual([{ key: 'chunks/a', size: second.length }]);
      });

      it('when the object is missing, then get rejects NotFoundError', async () => {
        await putObject(store, 'chunks/a', binary);

        expect(await rejection(store.get('chunks/b'))).toBeInstanceOf(NotFoundError);
        expect(await rejection(store.get('nothing/here/at/all'))).toBeInstanceOf(NotFoundError);
      });

      it('when the sha256 given does not match the body, then put refuses and stores nothing', async () => {
        const body = Buffer.from('the real body');
        const other = sha256Hex(Buffer.from('some other body'));

        const error = await rejection(store.put('chunks/a', body, { sha256: other }));

        expect(error).toBeInstanceOf(ChecksumMismatchError);
        expect(await rejection(store.get('chunks/a'))).toBeInstanceOf(NotFoundError);
        expect(await listAll(store, '')).toEqual([]);
      });

      it('when a put with a wrong sha256 targets a stored key, then the stored object is kept', async () => {
        const stored = Buffer.from('stored before');
        await putObject(store, 'chunks/a', stored);

        const error = await rejection(
          store.put('chunks/a', Buffer.from('replacement'), { sha256: sha256Hex(stored) }),
        );

        expect(error).toBeInstanceOf(ChecksumMismatchError);
        expect((await store.get('chunks/a')).equals(stored)).toBe(true);
      });

      it('when the sha256 is not 64 lowercase hex digits, then put and verify reject ValidationError', async () => {
        for (const sha256 of [
          '',
          'abc',
          sha256Hex(binary).toUpperCase(),
          `${sha256Hex(binary)}0`,
        ]) {
          expect(await rejection(store.put('chunks/a', binary, { sha256 }))).toBeInstanceOf(
            ValidationError,
          );
          expect(await rejection(store.verify('chunks/a', sha256))).toBeInstanceOf(ValidationError);
        }
      });
    });

    describe('verify', () => {
      it('when the stored object has that sha256, then verify is true', async () => {
        await putObject(store, 'chunks/a', binary);

        expect(await store.verify('chunks/a', sha256Hex(binary))).toBe(true);
      });

      it('when a different sha256 is asked, then verify is false', async () => {
        await putObject(store, 'chunks/a', binary);

        expect(await store.verify('chunks/a', sha256Hex(Buffer.from('other')))).toBe(false);
      });

      it('when the stored bytes were changed behind the store, then verify is false', async () => {
        await putObject(store, 'chunks/a', binary);
        const damaged = Buffer.from(binary);
        damaged[512] = (damaged[512]! + 1) % 256;

        await fixture.tamper('chunks/a', damaged);

        expect(await store.verify('chunks/a', sha256Hex(binary))).toBe(false);
        expect(await store.verify('chunks/a', sha256Hex(damaged))).toBe(true);
      });

      it('when the object is missing, then verify is false', async () => {
        expect(await store.verify('chunks/missing', sha256Hex(binary))).toBe(false);
      });
    });

    describe('size', () => {
      it('when an object is stored, then size is its byte count, and null once it is deleted', async () => {
        await putObject(store, 'chunks/a', binary);
        await putObject(store, 'chunks/empty', Buffer.alloc(0));

        expect(await store.size('chunks/a')).toBe(binary.length);
        expect(await store.size('chunks/empty')).toBe(0);
        await store.delete('chunks/a');
        expect(await store.size('chunks/a')).toBeNull();
        expect(await store.size('chunks/never')).toBeNull();
      });
    });

    describe('list', () => {
      const keys = [
        'a0',
        'a/b',
        'a-c',
        'chunks/2026/11/02',
        'chunks/2026/11/01',
        'chunks/2026/2/01',
      ];

      beforeEach(async () => {
        for (const [i, key] of keys.entries()) await putObject(store, key, Buffer.alloc(i + 1, i));
      });

      const sizeOf = (key: string) => keys.indexOf(key) + 1;
      const expected = (...list: string[]) => list.map((key) => ({ key, size: sizeOf(key) }));

      it('when listing everything, then every object comes in key (byte) order with its size', async () => {
        // "-" (0x2d) < "/" (0x2f) < "0" (0x30): a store that walks directories must still
        // return "a-c" before "a/b" before "a0".
        expect(await listAll(store, '')).toEqual(
          expected(
            'a-c',
            'a/b',
            'a0',
            'chunks/2026/11/01',
            'chunks/2026/11/02',
            'chunks/2026/2/01',
          ),
        );
      });

      it('when a prefix is given, then only keys starting with it are listed', async () => {
        expect(await listAll(store, 'chunks/')).toEqual(
          expected('chunks/2026/11/01', 'chunks/2026/11/02', 'chunks/2026/2/01'),
        );
        expect(await listAll(store, 'chunks/2026/1')).toEqual(
          expected('chunks/2026/11/01', 'chunks/2026/11/02'),
        );
        expect(await listAll(store, 'a')).toEqual(expected('a-c', 'a/b', 'a0'));
        expect(await listAll(store, 'a/')).toEqual(expected('a/b'));
        expect(await listAll(store, 'chunks/2026/11/02')).toEqual(expected('chunks/2026/11/02'));
        expect(await listAll(store, 'nothing/')).toEqual([]);
        expect(await listAll(store, 'chunks/2026/3')).toEqual([]);
      });

      it('when there are more objects than one listing page, then all of them come', async () => {
        const many = Array.from({ length: 25 }, (_, i) => `many/${String(i).padStart(3, '0')}`);
        for (const key of many) await putObject(store, key, Buffer.from(key));

        expect((await listAll(store, 'many/')).map((object) => object.key)).toEqual(many);
      });
    });

    describe('delete', () => {
      it('when an object is deleted, then it is gone, and deleting it again is no error', async () => {
        await putObject(store, 'chunks/a', binary);
        await putObject(store, 'chunks/b', binary);

        await store.delete('chunks/a');

        expect(await rejection(store.get('chunks/a'))).toBeInstanceOf(NotFoundError);
        expect(await store.verify('chunks/a', sha256Hex(binary))).toBe(false);
        expect(await listAll(store, '')).toEqual([{ key: 'chunks/b', size: binary.length }]);
        await store.delete('chunks/a');
        await store.delete('never/stored');
      });
    });

    describe('keys', () => {
      it('when a key could escape the root or prefix, then every operation rejects ValidationError', async () => {
        const sha256 = sha256Hex(binary);
        for (const key of escapingKeys) {
          for (const operation of [
            () => store.put(key, binary, { sha256 }),
            () => store.get(key),
            () => store.verify(key, sha256),
            () => store.size(key),
            () => store.delete(key),
          ]) {
            const error = await rejection(operation());
            expect(error).toBeInstanceOf(ValidationError);
            expect((error as ValidationError).fieldErrors[0]?.path).toBe('key');
          }
        }
        for (const prefix of ['../', 'a/../', '/', 'a\\', 'a\u0000', '.']) {
          expect(await rejection(listAll(store, prefix))).toBeInstanceOf(ValidationError);
        }
        expect(await listAll(store, '')).toEqual([]);
      });

      it('when a key holds spaces, unicode and many segments, then it round-trips', async () => {
        const key = 'media/laptop 7/2026-11-22/écran ✓/10:00:00.mp4';
        await putObject(store, key, binary);

        expect((await store.get(key)).equals(binary)).toBe(true);
        expect(await listAll(store, 'media/')).toEqual([{ key, size: binary.length }]);
      });
    });

    describe('ensureReady', () => {
      it('when called again, then it succeeds and stored objects stay', async () => {
        await putObject(store, 'chunks/a', binary);

        await store.ensureReady();

        expect(await store.verify('chunks/a', sha256Hex(binary))).toBe(true);
      });
    });

    describe('removeUnfinished', () => {
      it('when every write finished, then it removes nothing and every object stays', async () => {
        await putObject(store, 'chunks/a', binary);
        await putObject(store, 'media/x/0-b.sfa', binary);

        expect(await store.removeUnfinished()).toEqual({ count: 0, bytes: 0 });

        expect((await listAll(store, '')).map((object) => object.key)).toEqual([
          'chunks/a',
          'media/x/0-b.sfa',
        ]);
      });
    });

    describe('when the store is unreachable', () => {
      // A store given from outside (S3_ENDPOINT) cannot be stopped by a test.
      (options.canBreak === false ? it.skip : it)(
        'then every operation rejects StoreUnavailableError promptly, and once it is back the same store works with nothing lost',
        async () => {
          await putObject(store, 'chunks/a', binary);
          const sha256 = sha256Hex(binary);

          const restore = await fixture.breakStore();
          try {
            for (const [operation, run] of [
              ['put', () => store.put('chunks/b', binary, { sha256 })],
              ['get', () => store.get('chunks/a')],
              ['verify', () => store.verify('chunks/a', sha256)],
              ['size', () => store.size('chunks/a')],
              ['list', () => listAll(store, '')],
              ['delete', () => store.delete('chunks/a')],
            ] as const) {
              const started = Date.now();
              const error = await rejection(run());
              expect([operation, error]).toEqual([operation, expect.any(StoreUnavailableError)]);
              // Generous for a loaded machine: the point is seconds, not the SDK's minutes.
              expect(Date.now() - started).toBeLessThan(15_000);
            }
          } finally {
            await restore();
          }

          expect(await store.verify('chunks/a', sha256)).toBe(true);
          await putObject(store, 'chunks/b', binary);
          expect((await listAll(store, '')).map((object) => object.key)).toEqual([
            'chunks/a',
            'chunks/b',
          ]);
        },
      );
    });
  });
}
