import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { dockerAvailable, startContainers } from './containers';
import { buildFerretDb, startFerretDb, stopFerretDb } from '../../bin/ferretdb';
import { freePort } from '../../bin/ports';
import { buildMinio, randomCredentials, startMinioServer, stopMinioServer } from './minio';
import { rabbitmqctl } from './rabbitmqctl';

export type ServicesMode = 'env' | 'containers' | 'local';

export interface TestServices {
  mode: ServicesMode;
  rabbitmqUrl: string;
  mongodbUrl: string;
  s3: S3Service;
  /** Variables that hand these services to test processes (see ./index.ts). */
  env: Record<string, string>;
  stop(): Promise<void>;
}

/** An S3-compatible store: this run's MinIO, or the one given by S3_* variables. */
export interface S3Service {
  endpoint: string;
  region: string;
  accessKey: string;
  secretKey: string;
  forcePathStyle: boolean;
  /** Only when given (S3_BUCKET): a store where tests may not create buckets. */
  bucket?: string;
}

const LOCAL_RABBITMQ = 'amqp://guest:guest@127.0.0.1:5672';

/**
 * Finds or starts a real RabbitMQ and a real MongoDB-protocol server, in the order of
 * ARCHITECTURE.md "Test services": URLs from the environment, then testcontainers when a Docker
 * engine answers, else the local RabbitMQ (own vhost per run) and FerretDB in a temp directory.
 * The S3 store: S3_ENDPOINT (with S3_ACCESS_KEY, S3_SECRET_KEY, S3_REGION, S3_FORCE_PATH_STYLE,
 * S3_BUCKET) when set, else MinIO from tools/minio on a free port in a temp directory with root
 * credentials of its own.
 */
export async function startTestServices(log: (line: string) => void): Promise<TestServices> {
  const runId = `${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}`;
  const given = { rabbitmq: process.env.RABBITMQ_URL, mongodb: process.env.MONGODB_URL };
  const stops: Array<() => Promise<void>> = [];
  const env: Record<string, string> = {
    TEST_RUN_ID: runId,
    // The AWS SDK warns once per process that its 2027 releases need Node 22: known, and noise
    // in every test file's output (shared/notes/node-packages.md).
    AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
  };

  let mode: ServicesMode = given.rabbitmq && given.mongodb ? 'env' : 'local';
  let rabbitmqUrl = given.rabbitmq;
  let mongodbUrl = given.mongodb;

  if (mode !== 'env' && (await dockerAvailable())) {
    mode = 'containers';
    const started = await startContainers();
    rabbitmqUrl ??= started.rabbitmqUrl;
    mongodbUrl ??= started.mongodbUrl;
    const [rabbit, mongo] = started.containers;
    if (rabbit) env.TEST_RABBITMQ_CONTAINER = rabbit.getId();
    if (mongo) env.TEST_MONGODB_CONTAINER = mongo.getId();
    stops.push(async () => {
      await Promise.all(started.containers.map((container) => container.stop()));
    });
  }

  if (!rabbitmqUrl) {
    const vhost = `sf-test-${runId}`;
    await rabbitmqctl(['add_vhost', vhost]);
    await rabbitmqctl(['set_permissions', '-p', vhost, 'guest', '.*', '.*', '.*']);
    stops.push(async () => {
      await rabbitmqctl(['delete_vhost', vhost]);
    });
    rabbitmqUrl = `${LOCAL_RABBITMQ}/${encodeURIComponent(vhost)}`;
  }

  if (!mongodbUrl) {
    buildFerretDb();
    const dataDir = mkdtempSync(path.join(os.tmpdir(), 'sf-ferretdb-'));
    const ferret = await startFerretDb({ port: await freePort(), dataDir });
    Object.assign(env, {
      TEST_FERRETDB_PIDFILE: ferret.pidFile,
      TEST_FERRETDB_PORT: String(ferret.port),
      TEST_FERRETDB_DIR: dataDir,
    });
    stops.push(async () => {
      await stopFerretDb(ferret.pidFile, 'SIGTERM');
      rmSync(dataDir, { recursive: true, force: true });
    });
    mongodbUrl = ferret.url;
  }

  const s3 = await givenOrLocalS3(env, stops);

  Object.assign(env, {
    TEST_RABBITMQ_URL: rabbitmqUrl,
    TEST_MONGODB_URL: mongodbUrl,
    TEST_S3_ENDPOINT: s3.endpoint,
    TEST_S3_REGION: s3.region,
    TEST_S3_ACCESS_KEY: s3.accessKey,
    TEST_S3_SECRET_KEY: s3.secretKey,
    TEST_S3_FORCE_PATH_STYLE: String(s3.forcePathStyle),
    ...(s3.bucket ? { TEST_S3_BUCKET: s3.bucket } : {}),
  });
  log(
    `test services (${mode}): RABBITMQ_URL=${rabbitmqUrl} MONGODB_URL=${mongodbUrl} S3_ENDPOINT=${s3.endpoint}`,
  );
  return {
    mode,
    rabbitmqUrl,
    mongodbUrl,
    s3,
    env,
    async stop() {
      for (const stop of stops.reverse()) await stop();
    },
  };
}

async function givenOrLocalS3(
  env: Record<string, string>,
  stops: Array<() => Promise<void>>,
): Promise<S3Service> {
  const given = process.env.S3_ENDPOINT;
  if (given) {
    const accessKey = process.env.S3_ACCESS_KEY;
    const secretKey = process.env.S3_SECRET_KEY;
    if (!accessKey || !secretKey)
      throw new Error('S3_ENDPOINT is set: S3_ACCESS_KEY and S3_SECRET_KEY are needed too');
    return {
      endpoint: given,
      region: process.env.S3_REGION || 'us-east-1',
      accessKey,
      secretKey,
      forcePathStyle: process.env.S3_FORCE_PATH_STYLE !== 'false',
      ...(process.env.S3_BUCKET ? { bucket: process.env.S3_BUCKET } : {}),
    };
  }
  const bin = buildMinio();
  const parent = mkdtempSync(path.join(os.tmpdir(), 'sf-minio-'));
  const minio = await startMinioServer({
    bin,
    port: await freePort(),
    dataDir: path.join(parent, 'data'),
    ...randomCredentials(),
  });
  Object.assign(env, {
    TEST_MINIO_BIN: bin,
    TEST_MINIO_PIDFILE: minio.pidFile,
    TEST_MINIO_PORT: String(minio.port),
    TEST_MINIO_DIR: minio.dataDir,
  });
  stops.push(async () => {
    await stopMinioServer(minio.pidFile, 'SIGTERM');
    rmSync(parent, { recursive: true, force: true });
  });
  return {
    endpoint: minio.endpoint,
    region: 'us-east-1',
    accessKey: minio.accessKey,
    secretKey: minio.secretKey,
    forcePathStyle: true,
  };
}
