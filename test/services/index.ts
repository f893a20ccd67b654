/**
 * What integration tests use: this run's real RabbitMQ, MongoDB-protocol server and S3 store
 * (started or found by global-setup.ts), unique names, and ways to really break them.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
import { startFerretDb, stopFerretDb } from '../../bin/ferretdb';
import { startMinioServer, stopMinioServer } from './minio';

import { rabbitmqctl } from './rabbitmqctl';

export { startBrokerCluster, type BrokerCluster, type QueueState } from './rabbitmq-cluster';
export {
  brokerConnectionPids,
  closeBrokerConnections,
  rabbitmqctl,
  unackedMessages,
} from './rabbitmqctl';

function required(name: string): string {
  const value = process.env[name];
  if (!value)
    throw new Error(`${name} is not set: run integration tests through jest's integration project`);
  return value;
}

/** AMQP URL of this run's own vhost (or of the broker given in RABBITMQ_URL). */
export const brokerUrl = () => required('TEST_RABBITMQ_URL');

/** MongoDB URL of this run's database server. */
export const mongoUrl = () => required('TEST_MONGODB_URL');

let counter = 0;
/**
 * A name no other test or run uses: for queues, exchanges, databases and devices. The random
 * part matters: jest gives each test file a fresh copy of this module (the counter restarts at
 * 0) and `--runInBand` runs every file in one process (same pid), so pid and counter alone named
 * a later file's database after an earlier file's, state and all.
 */
export function uniqueName(prefix: string): string {
  counter += 1;
  const random = randomBytes(3).toString('hex');
  return `${prefix}-${required('TEST_RUN_ID')}-${process.pid}-${counter}${random}`;
}

/** A fresh database name (FerretDB and MongoDB both accept these characters). */
export const databaseName = (prefix = 'test') => uniqueName(prefix).replace(/-/g, '_');

const run = promisify(execFile);

/** Kills the database server as a crash would; `startMongo` brings it back on the same data. */
export async function killMongo(): Promise<void> {
  const container = process.env.TEST_MONGODB_CONTAINER;
  if (container) {
    await run('docker', ['kill', container]);
    return;
  }
  await stopFerretDb(required('TEST_FERRETDB_PIDFILE'), 'SIGKILL');
}

export async function startMongo(): Promise<void> {
  const container = process.env.TEST_MONGODB_CONTAINER;
  if (container) {
    await run('docker', ['start', container]);
    return;
  }
  await startFerretDb({
    port: Number(required('TEST_FERRETDB_PORT')),
    dataDir: required('TEST_FERRETDB_DIR'),
  });
}

/**
 * A vhost of its own, for tests that use the system's fixed queue names (ingest.content...) and
 * must not see another test file's messages. Removed (with everything in it) by `remove`.
 */
export async function isolatedBroker(): Promise<{ url: string; remove(): Promise<void> }> {
  const vhost = uniqueName('sf-vhost');
  await rabbitmqctl(['add_vhost', vhost]);
  await rabbitmqctl(['set_permissions', '-p', vhost, 'guest', '.*', '.*', '.*']);
  const base = new URL(brokerUrl());
  base.pathname = `/${encodeURIComponent(vhost)}`;
  return {
    url: base.toString(),
    remove: async () => {
      await rabbitmqctl(['delete_vhost', vhost]);
    },
  };
}

/**
 * This run's S3-compatible store, in the shape `createS3ArchiveStore` takes (add `bucket` and
 * `prefix`). `bucket` is set only when the store was given with S3_BUCKET: use it then (with a
 * prefix of the test's own), else create a bucket named by `s3BucketName`.
 */
export function s3Settings(): {
  endpoint: string;
  region: string;
  forcePathStyle: boolean;
  credentials: { accessKeyId: string; secretAccessKey: string };
  bucket?: string;
} {
  const bucket = process.env.TEST_S3_BUCKET;
  return {
    endpoint: required('TEST_S3_ENDPOINT'),
    region: required('TEST_S3_REGION'),
    forcePathStyle: process.env.TEST_S3_FORCE_PATH_STYLE !== 'false',
    credentials: {
      accessKeyId: required('TEST_S3_ACCESS_KEY'),
      secretAccessKey: required('TEST_S3_SECRET_KEY'),
    },
    ...(bucket ? { bucket } : {}),
  };
}

/** A bucket name no other test or run uses (lowercase, digits and "-", at most 63 characters). */
export const s3BucketName = (prefix = 'sf') =>
  uniqueName(prefix)
    .toLowerCase()
    .replace(/[^a-z0-9-]/g, '-')
    .slice(0, 63);

/** True when this run started its own MinIO, so a test may stop and restart it. */
export const canStopS3 = () => Boolean(process.env.TEST_MINIO_PIDFILE);

/**
 * Stops this run's MinIO (SIGTERM by default; SIGKILL as a crash) and waits until it is gone;
 * `startMinio` brings it back on the same port, data and credentials. Throws when the S3 store
 * was given from outside (check `canStopS3()` first).
 */
export async function stopMinio(signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
  await stopMinioServer(required('TEST_MINIO_PIDFILE'), signal);
}

export async function startMinio(): Promise<void> {
  await startMinioServer({
    bin: required('TEST_MINIO_BIN'),
    port: Number(required('TEST_MINIO_PORT')),
    dataDir: required('TEST_MINIO_DIR'),
    accessKey: required('TEST_S3_ACCESS_KEY'),
    secretKey: required('TEST_S3_SECRET_KEY'),
  });
}
