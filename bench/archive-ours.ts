import type { ContentDocument } from '@screenfleet/storage';
import type { S3Service, TestServices } from '../test/services/start';

export interface OursOptions {
  mongoUrl: string;
  database: string;
  s3: S3Service;
  bucket: string;
  prefix: string;
  chunkSize: number;
  retentionDays: number;
  encryptionKey: Buffer | undefined;
}

/**
 * The archive worker's pass over the data set; the items it moved, or null while the worker's
 * pass is not on this branch yet (it is built on wt-aworker).
 */
export function runOurs(_options: OursOptions): Promise<number | null> {
  return Promise.resolve(null);
}

export interface StatusRpcOptions {
  services: TestServices;
  calls: number;
  concurrency: number;
  database: string;
  docs: ContentDocument[];
}

/** Status RPC latency through archive.rpc to the real worker; null until the worker is here. */
export function measureStatusRpc(
  _options: StatusRpcOptions,
): Promise<Record<string, number> | null> {
  return Promise.resolve(null);
}
