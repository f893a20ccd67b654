/**
 * The distributed system a bench measures: a FerretDB and a RabbitMQ vhost of this run, the
 * content store on them (to load data as the services would), then an ingest worker and a
 * gateway started on them by `serve`. `stop` ends what was started and removes the vhost.
 */
import path from 'node:path';
import { createMongoContentStore, type ContentStore } from '@screenfleet/storage';
import { buildFerretDb, startFerretDb, stopFerretDb } from '../bin/ferretdb';
import { freePort } from '../bin/ports';
import { rabbitmqctl } from '../test/services/rabbitmqctl';
import { startService, type ServiceProcess } from '../test/support/processes';

export interface DistributedStack {
  ferretUrl: string;
  database: string;
  store: ContentStore;
  /** Starts an ingest worker and a gateway (these settings added); the gateway's base URL. */
  serve(gatewayEnv: Record<string, string>): Promise<string>;
  stop(): Promise<void>;
}

export async function startDistributedStack(
  name: string,
  dir: string,
  database: string,
): Promise<DistributedStack> {
  buildFerretDb();
  const ferret = await startFerretDb({
    port: await freePort(),
    dataDir: path.join(dir, 'ferretdb'),
  });
  const vhost = `sf-bench-${name}-${process.pid}`;
  const store = createMongoContentStore({ url: ferret.url, database });
  const processes: ServiceProcess[] = [];
  const stop = async () => {
    for (const p of processes.reverse()) await p.stop();
    await store.close();
    await rabbitmqctl(['delete_vhost', vhost]).catch(() => undefined);
    await stopFerretDb(ferret.pidFile, 'SIGTERM');
  };
  try {
    await rabbitmqctl(['add_vhost', vhost]);
    await rabbitmqctl(['set_permissions', '-p', vhost, 'guest', '.*', '.*', '.*']);
    await store.ensureIndexes();
  } catch (error) {
    await stop();
    throw error;
  }
  const env = {
    RABBITMQ_URL: `amqp://guest:guest@127.0.0.1:5672/${encodeURIComponent(vhost)}`,
    MONGODB_URL: ferret.url,
    MONGODB_DATABASE: database,
    LOG_LEVEL: 'info',
  };
  return {
    ferretUrl: ferret.url,
    database,
    store,
    async serve(gatewayEnv) {
      const worker = startService('ingest-worker', { ...env, INGEST_OPS_PORT: '0' });
      processes.push(worker);
      await worker.waitForLog(/consuming content batches/);
      const gateway = startService('gateway', {
        ...env,
        GATEWAY_PORT: '0',
        GATEWAY_OPS_PORT: '0',
        ...gatewayEnv,
      });
      processes.push(gateway);
      return `http://127.0.0.1:${Number((await gateway.waitForLog(/gateway listening/)).port)}`;
    },
    stop,
  };
}
