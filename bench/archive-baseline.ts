import { createCipheriv, randomBytes } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import { PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { MongoClient } from 'mongodb';

export interface BaselineOptions {
  mongoUrl: string;
  database: string;
  s3: S3Client;
  bucket: string;
  prefix: string;
  cutoff: Date;
  chunkSize: number;
  /** 32 bytes: AES-256-GCM as the worker does; absent for none. */
  encryptionKey: Buffer | undefined;
}

/**
 * The least an archiver must do, as a reference: read the items before the cutoff in chunks in
 * (timestamp, _id) order, write each as gzipped JSON lines (encrypted when a key is set) to the
 * same bucket, delete them. No verification, no manifest, no state, no lease, no crash safety.
 * Returns how many items it moved and the seconds it took (connecting excluded, as for ours).
 */
export async function runBaseline(
  options: BaselineOptions,
): Promise<{ moved: number; seconds: number }> {
  const client = await MongoClient.connect(options.mongoUrl);
  const started = performance.now();
  try {
    const items = client
      .db(options.database)
      .collection<{ _id: string; timestamp: Date }>('content_items');
    let moved = 0;
    for (let chunk = 0; ; chunk += 1) {
      // What was read is deleted before the next query, so each query starts at the front.
      const docs = await items
        .find({ timestamp: { $lt: options.cutoff } })
        .sort({ timestamp: 1, _id: 1 })
        .limit(options.chunkSize)
        .toArray();
      if (docs.length === 0) return { moved, seconds: (performance.now() - started) / 1000 };
      const gz = gzipSync(Buffer.from(docs.map((doc) => JSON.stringify(doc)).join('\n')));
      await options.s3.send(
        new PutObjectCommand({
          Bucket: options.bucket,
          Key: `${options.prefix}/chunks/${String(chunk).padStart(6, '0')}.jsonl.gz`,
          Body: seal(gz, options.encryptionKey),
        }),
      );
      await items.deleteMany({ _id: { $in: docs.map((doc) => doc._id) } });
      moved += docs.length;
    }
  } finally {
    await client.close();
  }
}

function seal(plain: Buffer, key: Buffer | undefined): Buffer {
  if (!key) return plain;
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  const ciphertext = Buffer.concat([cipher.update(plain), cipher.final()]);
  return Buffer.concat([iv, cipher.getAuthTag(), ciphertext]);
}
