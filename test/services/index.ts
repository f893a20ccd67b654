/**
 * What integration tests use: this run's real RabbitMQ and MongoDB-protocol server (started or
 * found by global-setup.ts), unique names, and ways to really break them.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { startFerretDb, stopFerretDb } from './ferretdb';

import { rabbitmqctl } from './rabbitmqctl';

export { closeBrokerConnections, rabbitmqctl } from './rabbitmqctl';

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
/** A name no other test or run uses: for queues, exchanges, databases and devices. */
export function uniqueName(prefix: string): string {
  counter += 1;
  return `${prefix}-${required('TEST_RUN_ID')}-${process.pid}-${counter}`;
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
