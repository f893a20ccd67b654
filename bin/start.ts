/**
 * `npm start`: runs the whole system on this machine.
 *
 * With RABBITMQ_URL and MONGODB_URL set it runs the services against them. Without, it uses
 * the RabbitMQ on 127.0.0.1:5672 and starts FerretDB (tools/ferretdb) over ./data/ferretdb (the
 * archive worker keeps its filesystem archive in ./data/archive), so a newcomer sees it work at
 * once. (The embedded single-process mode of ARCHITECTURE.md, with
 * no broker at all, is still to come.) Ctrl-C stops everything in reverse order of start.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import net from 'node:net';
import path from 'node:path';
import { buildFerretDb, startFerretDb, stopFerretDb } from '../test/services/ferretdb';
import { ensureOperatorKeys } from './operator-keys';

const root = path.resolve(__dirname, '..');
const dataDir = path.resolve(process.env.DATA_DIR ?? path.join(root, 'data'));

function log(message: string): void {
  process.stderr.write(`[start] ${message}\n`);
}

function portOpen(port: number, host = '127.0.0.1'): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, host);
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

async function freePortFrom(port: number): Promise<number> {
  while (await portOpen(port)) port += 1;
  return port;
}

function startService(name: string, env: Record<string, string>): ChildProcess {
  const child = spawn(process.execPath, [path.join(root, 'services', name, 'dist/main.js')], {
    env: { ...process.env, DATA_DIR: dataDir, ...env },
    stdio: 'inherit',
    // Own process group: Ctrl-C reaches only this launcher, which stops the services one by
    // one in reverse order of start (a second signal would cut their graceful stop short).
    detached: true,
  });
  child.once('exit', (code, signal) => {
    if (!stopping) {
      log(`${name} exited (${signal ?? code}); stopping the rest`);
      void stopAll(1);
    }
  });
  log(`started ${name} (pid ${child.pid})`);
  return child;
}

const children: Array<{ name: string; child: ChildProcess }> = [];
const cleanups: Array<() => Promise<void>> = [];
let stopping = false;

async function stopAll(code: number): Promise<void> {
  if (stopping) return;
  stopping = true;
  for (const { name, child } of [...children].reverse()) {
    if (child.exitCode !== null || child.signalCode !== null) continue;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    await exited;
    log(`stopped ${name}`);
  }
  for (const cleanup of cleanups.reverse()) await cleanup();
  process.exit(code);
}

async function main(): Promise<void> {
  let rabbitmqUrl = process.env.RABBITMQ_URL;
  let mongodbUrl = process.env.MONGODB_URL;

  if (!rabbitmqUrl) {
    if (!(await portOpen(5672))) {
      throw new Error(
        'no RabbitMQ answers on 127.0.0.1:5672: start one (rabbitmq-server -detached) or set RABBITMQ_URL',
      );
    }
    rabbitmqUrl = 'amqp://guest:guest@127.0.0.1:5672';
    log(`using the local RabbitMQ at ${rabbitmqUrl}`);
  }
  if (!mongodbUrl) {
    buildFerretDb();
    // A FerretDB left running by an earlier start that did not stop cleanly owns the data dir.
    await stopFerretDb(path.join(dataDir, 'ferretdb', 'ferretdb.pid'), 'SIGTERM').catch(
      () => undefined,
    );
    const ferret = await startFerretDb({
      port: await freePortFrom(27017),
      dataDir: path.join(dataDir, 'ferretdb'),
    });
    cleanups.push(() => stopFerretDb(ferret.pidFile, 'SIGTERM'));
    mongodbUrl = ferret.url;
    log(`started FerretDB at ${mongodbUrl} (data in ${ferret.dataDir})`);
  }

  const shared = { RABBITMQ_URL: rabbitmqUrl, MONGODB_URL: mongodbUrl };
  // Operator commands are signed by the gateway and verified by the agent (issue 19, item 6).
  const keys = ensureOperatorKeys(dataDir);
  const gatewayEnv = {
    ...shared,
    GATEWAY_OPERATOR_SIGNING_KEY: process.env.GATEWAY_OPERATOR_SIGNING_KEY ?? keys.privateKey,
  };
  const agentEnv = {
    ...shared,
    OPERATOR_COMMAND_PUBLIC_KEY: process.env.OPERATOR_COMMAND_PUBLIC_KEY ?? keys.publicKey,
  };
  children.push({ name: 'ingest-worker', child: startService('ingest-worker', shared) });
  children.push({
    name: 'archive-worker',
    // A filesystem archive under the data directory unless the environment names another store.
    child: startService('archive-worker', {
      ...shared,
      ARCHIVE_DIR: process.env.ARCHIVE_DIR ?? path.join(dataDir, 'archive'),
    }),
  });
  children.push({ name: 'gateway', child: startService('gateway', gatewayEnv) });
  if (process.env.DEVICE_NAME) {
    children.push({ name: 'operator-agent', child: startService('operator-agent', agentEnv) });
  } else {
    log('no DEVICE_NAME: the operator agent for this desktop is not started');
  }
  log(
    `API on http://${process.env.GATEWAY_HOST ?? '127.0.0.1'}:${process.env.GATEWAY_PORT ?? 3030} (token in ${path.join(dataDir, 'gateway-token')}, printed once when generated); Ctrl-C stops`,
  );

  process.once('SIGINT', () => void stopAll(0));
  process.once('SIGTERM', () => void stopAll(0));
}

main().catch(async (error: unknown) => {
  log(`cannot start: ${error instanceof Error ? error.message : String(error)}`);
  await stopAll(1);
});
