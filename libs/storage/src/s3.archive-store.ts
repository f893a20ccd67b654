import { createHash } from 'node:crypto';
import type { Readable } from 'node:stream';
import {
  CreateBucketCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  HeadBucketCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
  type BucketLocationConstraint,
} from '@aws-sdk/client-s3';
import { checkArchiveKey, checkArchivePrefix, checkSha256 } from './archive-key';
import type { ArchiveObject, ArchiveStore } from './archive-store';
import { classifyS3Error, toArchiveError } from './s3-errors';

export interface S3ArchiveStoreOptions {
  /** Absent for AWS S3 (the region decides); the store's URL for MinIO, R2, B2 and the like. */
  endpoint?: string;
  /** "us-east-1" for MinIO, "auto" for R2, the bucket's region for AWS S3 and B2. */
  region: string;
  bucket: string;
  /** Where in the bucket this archive lives ("" for the whole bucket): keys go under `prefix/`. */
  prefix: string;
  /** Absent: the SDK's default chain (env, shared config, instance role). */
  credentials?: { accessKeyId: string; secretAccessKey: string; sessionToken?: string };
  /** Bucket in the path, not the host name: needed for MinIO and most self-hosted stores. */
  forcePathStyle?: boolean;
  /** Attempts per request, the first included (default 3): an outage shows in seconds. */
  maxAttempts?: number;
  /** Milliseconds to establish a connection (default 3000). */
  connectionTimeoutMs?: number;
  /** Milliseconds a request may wait for the socket without progress (default 10000). */
  requestTimeoutMs?: number;
  /** Keys per ListObjectsV2 page (default and S3's maximum 1000). */
  listPageSize?: number;
}

/**
 * The archive in an S3-compatible bucket. `put` sends the caller's SHA-256 as the object's
 * ChecksumSHA256, so the store itself refuses a body that does not match it, and `verify` asks
 * the store for that checksum (HeadObject with ChecksumMode) instead of reading the object back.
 */
export function createS3ArchiveStore(options: S3ArchiveStoreOptions): ArchiveStore {
  const { bucket } = options;
  const base = options.prefix.replace(/\/+$/, '');
  if (base !== '') checkArchiveKey(base);
  const client = new S3Client({
    region: options.region,
    ...(options.endpoint ? { endpoint: options.endpoint } : {}),
    ...(options.credentials ? { credentials: options.credentials } : {}),
    forcePathStyle: options.forcePathStyle ?? false,
    maxAttempts: options.maxAttempts ?? 3,
    requestHandler: {
      connectionTimeout: options.connectionTimeoutMs ?? 3000,
      requestTimeout: options.requestTimeoutMs ?? 10_000,
    },
  });
  const pageSize = options.listPageSize ?? 1000;

  const objectKey = (key: string) => {
    checkArchiveKey(key);
    return base === '' ? key : `${base}/${key}`;
  };

  async function attempt<T>(operation: string, key: string | undefined, work: () => Promise<T>) {
    try {
      return await work();
    } catch (error) {
      throw toArchiveError(error, operation, key);
    }
  }

  async function hashOfStored(Key: string): Promise<string> {
    const { Body } = await client.send(new GetObjectCommand({ Bucket: bucket, Key }));
    const hash = createHash('sha256');
    // Streamed: a large object is hashed without holding it in memory.
    if (Body) for await (const chunk of Body as Readable) hash.update(chunk as Buffer);
    return hash.digest('hex');
  }

  async function* listObjects(prefix: string): AsyncGenerator<ArchiveObject> {
    checkArchivePrefix(prefix);
    const strip = base === '' ? 0 : base.length + 1;
    let ContinuationToken: string | undefined;
    do {
      const page = await attempt('list', prefix, () =>
        client.send(
          new ListObjectsV2Command({
            Bucket: bucket,
            Prefix: base === '' ? prefix : `${base}/${prefix}`,
            MaxKeys: pageSize,
            ContinuationToken,
          }),
        ),
      );
      for (const object of page.Contents ?? []) {
        if (object.Key === undefined) continue;
        yield { key: object.Key.slice(strip), size: object.Size ?? 0 };
      }
      ContinuationToken = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (ContinuationToken);
  }

  return {
    ensureReady: () =>
      attempt('ensureReady', undefined, async () => {
        try {
          await client.send(new HeadBucketCommand({ Bucket: bucket }));
          return;
        } catch (error) {
          if (classifyS3Error(error) !== 'not_found') throw error;
        }
        try {
          await client.send(
            new CreateBucketCommand({
              Bucket: bucket,
              // us-east-1 is the default location and must not be named (AWS refuses it).
              ...(options.region === 'us-east-1' || options.region === 'auto'
                ? {}
                : {
                    CreateBucketConfiguration: {
                      LocationConstraint: options.region as BucketLocationConstraint,
                    },
                  }),
            }),
          );
        } catch (error) {
          // Another worker created it in between: what we wanted.
          const name = (error as { name?: unknown }).name;
          if (name !== 'BucketAlreadyOwnedByYou') throw error;
        }
      }),

    put: async (key, body, { sha256 }) => {
      const Key = objectKey(key);
      checkSha256(sha256);
      await attempt('put', key, async () => {
        await client.send(
          new PutObjectCommand({
            Bucket: bucket,
            Key,
            Body: body,
            ContentLength: body.length,
            ChecksumAlgorithm: 'SHA256',
            ChecksumSHA256: Buffer.from(sha256, 'hex').toString('base64'),
          }),
        );
      });
    },

    verify: async (key, sha256) => {
      const Key = objectKey(key);
      checkSha256(sha256);
      return attempt('verify', key, async () => {
        try {
          const head = await client.send(
            new HeadObjectCommand({ Bucket: bucket, Key, ChecksumMode: 'ENABLED' }),
          );
          // A multipart ("composite", "...-3") checksum is not the object's SHA-256: hash instead.
          const stored = head.ChecksumSHA256;
          if (stored && !stored.includes('-')) {
            return Buffer.from(stored, 'base64').toString('hex') === sha256;
          }
          // The store keeps no SHA-256 for it (written by another tool, or a store without
          // checksums): read it back and hash.
          return (await hashOfStored(Key)) === sha256;
        } catch (error) {
          if (classifyS3Error(error) === 'not_found') return false;
          throw error;
        }
      });
    },

    size: async (key) => {
      const Key = objectKey(key);
      return attempt('size', key, async () => {
        try {
          const head = await client.send(new HeadObjectCommand({ Bucket: bucket, Key }));
          return head.ContentLength ?? 0;
        } catch (error) {
          if (classifyS3Error(error) === 'not_found') return null;
          throw error;
        }
      });
    },

    get: async (key) => {
      const Key = objectKey(key);
      return attempt('get', key, async () => {
        const { Body } = await client.send(new GetObjectCommand({ Bucket: bucket, Key }));
        if (!Body) return Buffer.alloc(0);
        return Buffer.from(await Body.transformToByteArray());
      });
    },

    list: (prefix) => listObjects(prefix),

    delete: async (key) => {
      const Key = objectKey(key);
      // S3 answers 204 for a missing key too: deleting twice is no error.
      await attempt('delete', key, async () => {
        await client.send(new DeleteObjectCommand({ Bucket: bucket, Key }));
      });
    },

    // A PutObject is stored whole or not at all, and this store never starts multipart uploads.
    removeUnfinished: () => Promise.resolve({ count: 0, bytes: 0 }),

    close: () => {
      client.destroy();
      return Promise.resolve();
    },
  };
}
