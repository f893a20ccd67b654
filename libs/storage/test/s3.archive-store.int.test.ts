import {
  DeleteBucketCommand,
  DeleteObjectCommand,
  HeadBucketCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
} from '@aws-sdk/client-s3';
import { createS3ArchiveStore, type S3ArchiveStoreOptions } from '@screenfleet/storage';
import {
  canStopS3,
  s3BucketName,
  s3Settings,
  startMinio,
  stopMinio,
  uniqueName,
} from '../../../test/services';
import { describeArchiveStoreContract, putObject, sha256Hex } from './archive-store.contract';

const settings = s3Settings();

/** The low-level client: writes behind the store's back, and cleans up. */
function rawClient(options: { checksums?: boolean } = {}): S3Client {
  return new S3Client({
    region: settings.region,
    endpoint: settings.endpoint,
    forcePathStyle: settings.forcePathStyle,
    credentials: settings.credentials,
    maxAttempts: 1,
    // Without this the SDK adds a CRC32 checksum to every put; some tests need none at all.
    ...(options.checksums === false
      ? { requestChecksumCalculation: 'WHEN_REQUIRED' as const }
      : {}),
  });
}
const raw = rawClient();

afterAll(() => raw.destroy());

/** A bucket and prefix of this test's own: a fresh bucket, unless the store was given one. */
function placement(): { bucket: string; prefix: string; ownBucket: boolean } {
  return settings.bucket
    ? { bucket: settings.bucket, prefix: uniqueName('archive'), ownBucket: false }
    : { bucket: s3BucketName('sf-archive'), prefix: 'archive', ownBucket: true };
}

/** Removes everything under the prefix, then the bucket when this test created it. */
async function removePlacement(place: { bucket: string; prefix: string; ownBucket: boolean }) {
  const exists = await raw.send(new HeadBucketCommand({ Bucket: place.bucket })).then(
    () => true,
    () => false,
  );
  if (!exists) return;
  let ContinuationToken: string | undefined;
  do {
    const page = await raw.send(
      new ListObjectsV2Command({
        Bucket: place.bucket,
        Prefix: `${place.prefix}/`,
        ContinuationToken,
      }),
    );
    for (const { Key } of page.Contents ?? []) {
      await raw.send(new DeleteObjectCommand({ Bucket: place.bucket, Key }));
    }
    ContinuationToken = page.IsTruncated ? page.NextContinuationToken : undefined;
  } while (ContinuationToken);
  if (place.ownBucket) await raw.send(new DeleteBucketCommand({ Bucket: place.bucket }));
}

function makeStore(
  place: { bucket: string; prefix: string },
  extra: Partial<S3ArchiveStoreOptions> = {},
) {
  return createS3ArchiveStore({
    endpoint: settings.endpoint,
    region: settings.region,
    forcePathStyle: settings.forcePathStyle,
    credentials: settings.credentials,
    bucket: place.bucket,
    prefix: place.prefix,
    ...extra,
  });
}

describeArchiveStoreContract(
  `s3 (${settings.endpoint})`,
  () => {
    const place = placement();
    // Small pages, so the contract's listing of 25 objects really walks several pages.
    const store = makeStore(place, { listPageSize: 4, maxAttempts: 2, connectionTimeoutMs: 1000 });
    return Promise.resolve({
      store,
      // Different bytes under the same key, written with the SDK's default (CRC32) checksum:
      // the store then keeps no SHA-256, so verify must read back and hash.
      tamper: async (key: string, body: Buffer) => {
        await raw.send(
          new PutObjectCommand({ Bucket: place.bucket, Key: `${place.prefix}/${key}`, Body: body }),
        );
      },
      breakStore: async () => {
        await stopMinio();
        return () => startMinio();
      },
      cleanup: () => removePlacement(place),
    });
  },
  { canBreak: canStopS3() },
);

describe('s3 archive store', () => {
  const places: Array<ReturnType<typeof placement>> = [];
  function place() {
    const p = placement();
    places.push(p);
    return p;
  }

  afterEach(async () => {
    for (const p of places.splice(0)) await removePlacement(p);
  });

  it('when the bucket is missing, then ensureReady creates it, and calling it again is harmless', async () => {
    const p = place();
    const store = makeStore(p);
    try {
      await store.ensureReady();
      await store.ensureReady();

      await raw.send(new HeadBucketCommand({ Bucket: p.bucket }));
    } finally {
      await store.close();
    }
  });

  it('when a prefix is set, then objects live under it and keys come back relative to it', async () => {
    const p = place();
    const store = makeStore({ bucket: p.bucket, prefix: `${p.prefix}/` });
    try {
      await store.ensureReady();
      await putObject(store, 'chunks/a', Buffer.from('a'));

      const listed = await raw.send(new ListObjectsV2Command({ Bucket: p.bucket }));
      expect(listed.Contents?.map((object) => object.Key)).toEqual([`${p.prefix}/chunks/a`]);
      const keys: string[] = [];
      for await (const object of store.list('')) keys.push(object.key);
      expect(keys).toEqual(['chunks/a']);
    } finally {
      await store.close();
    }
  });

  it('when another writer stored different bytes with their own SHA-256 checksum, then verify compares the stored checksum and is false', async () => {
    const p = place();
    const store = makeStore(p);
    try {
      await store.ensureReady();
      const original = Buffer.from('original chunk');
      const other = Buffer.from('other chunk');
      await putObject(store, 'chunks/a', original);

      await raw.send(
        new PutObjectCommand({
          Bucket: p.bucket,
          Key: `${p.prefix}/chunks/a`,
          Body: other,
          ChecksumAlgorithm: 'SHA256',
        }),
      );

      expect(await store.verify('chunks/a', sha256Hex(original))).toBe(false);
      expect(await store.verify('chunks/a', sha256Hex(other))).toBe(true);
    } finally {
      await store.close();
    }
  });

  it('when the stored object carries no checksum at all, then verify reads it back and hashes it', async () => {
    const p = place();
    const store = makeStore(p);
    const plain = rawClient({ checksums: false });
    try {
      await store.ensureReady();
      const body = Buffer.from('written by another tool, without checksums');
      await plain.send(
        new PutObjectCommand({ Bucket: p.bucket, Key: `${p.prefix}/chunks/a`, Body: body }),
      );

      expect(await store.verify('chunks/a', sha256Hex(body))).toBe(true);
      expect(await store.verify('chunks/a', sha256Hex(Buffer.from('something else')))).toBe(false);
    } finally {
      plain.destroy();
      await store.close();
    }
  });
});
