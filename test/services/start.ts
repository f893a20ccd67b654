import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { dockerAvailable, startContainers } from './containers';
import { buildFerretDb, freePort, startFerretDb, stopFerretDb } from './ferretdb';
import { rabbitmqctl } from './rabbitmqctl';

export type ServicesMode = 'env' | 'containers' | 'local';

export interface TestServices {
  mode: ServicesMode;
  rabbitmqUrl: string;
  mongodbUrl: string;
  /** Variables that hand these services to test processes (see ./index.ts). */
  env: Record<string, string>;
  stop(): Promise<void>;
}

const LOCAL_RABBITMQ = 'amqp://guest:guest@127.0.0.1:5672';

/**
 * Finds or starts a real RabbitMQ and a real MongoDB-protocol server, in the order of
 * ARCHITECTURE.md "Test services": URLs from the environment, then testcontainers when a Docker
 * engine answers, else the local RabbitMQ (own vhost per run) and FerretDB in a temp directory.
 */
export async function startTestServices(log: (line: string) => void): Promise<TestServices> {
  const runId = `${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}`;
  const given = { rabbitmq: process.env.RABBITMQ_URL, mongodb: process.env.MONGODB_URL };
  const stops: Array<() => Promise<void>> = [];
  const env: Record<string, string> = { TEST_RUN_ID: runId };

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

  Object.assign(env, { TEST_RABBITMQ_URL: rabbitmqUrl, TEST_MONGODB_URL: mongodbUrl });
  log(`test services (${mode}): RABBITMQ_URL=${rabbitmqUrl} MONGODB_URL=${mongodbUrl}`);
  return {
    mode,
    rabbitmqUrl,
    mongodbUrl,
    env,
    async stop() {
      for (const stop of stops.reverse()) await stop();
    },
  };
}
