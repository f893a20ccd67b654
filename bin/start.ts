/**
 * `npm start`: runs the whole system on this machine, in one of two modes.
 *
 * - Embedded (no RABBITMQ_URL, no MONGODB_URL): every service in this one process over the
 *   in-process bus and one SQLite file under DATA_DIR (./data). Needs only Node.
 * - Distributed (RABBITMQ_URL and MONGODB_URL set, or `--stack`): the services as separate
 *   processes against the broker and the MongoDB-protocol server. `npm run start:stack` uses the
 *   RabbitMQ on 127.0.0.1:5672 and starts FerretDB (tools/ferretdb) over ./data/ferretdb.
 *
 * This file only decides: which mode, which services, which processes. libs/modes runs them
 * (the adapters of each mode, the one host of a process). It prints what it started and where;
 * Ctrl-C stops everything in reverse order of start.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { archiveWorkerService } from '@screenfleet/archive-worker';
import { gatewayConfigSpec, gatewayService } from '@screenfleet/gateway';
import { ingestWorkerService } from '@screenfleet/ingest-worker';
import { embeddedDatabaseFile, runEmbedded } from '@screenfleet/modes';
import { operatorAgentService } from '@screenfleet/operator-agent';
import {
  currentEnv,
  ensurePrivateDir,
  loadConfig,
  withoutServerVars,
  type Env,
} from '@screenfleet/runtime';
import { buildFerretDb, startFerretDb, stopFerretDb } from './ferretdb';
import { launchDefaults } from './launch-defaults';
import { launcherConfigSpec, type LauncherConfig } from './launcher-config';
import { portOpen } from './ports';
import { projectRoot } from './project-root';

const root = projectRoot;

function log(message: string): void {
  process.stderr.write(`[start] ${message}\n`);
}

/** The launcher's last line and its exit, in both modes. */
function finish(code: number): void {
  log(code === 0 ? 'stopped' : 'stopped after an error');
  process.exit(code);
}

async function freePortFrom(port: number): Promise<number> {
  while (await portOpen(port)) port += 1;
  return port;
}

async function runEmbeddedMode(config: LauncherConfig, env: Env): Promise<void> {
  // The host's variables (ops server, log level, stop limit) and the bus's waits are the API's.
  const api = loadConfig(withoutServerVars(gatewayConfigSpec), env);
  const options = {
    env,
    hosted: api,
    dataDir: api.dataDir,
    publishTimeoutMs: api.publishTimeout,
    outcomeTimeoutMs: api.outcomeTimeout,
    exit: finish,
  };
  await runEmbedded(options, async (start) => {
    await start(ingestWorkerService);
    const archive = await start(archiveWorkerService);
    if (config.deviceName) await start(operatorAgentService);
    const gateway = await start(gatewayService);
    return (ops) => {
      log('embedded mode: every service in this process, no broker, no database server');
      const dataDir = path.resolve(api.dataDir);
      const file = embeddedDatabaseFile(dataDir);
      log(`data directory ${dataDir} (SQLite ${file}, archive ${archive.archiveStore})`);
      log(
        config.deviceName
          ? `operator agent for device ${config.deviceName}`
          : 'no DEVICE_NAME: no operator agent',
      );
      log(`metrics on http://127.0.0.1:${ops.port}/metrics`);
      announce(config.apiHost, gateway.port, gateway.tokenFile);
    };
  });
}

const children: Array<{ name: string; child: ChildProcess }> = [];
let stopFerret: (() => Promise<void>) | undefined;
let stopping = false;

/** Longest graceful stop before the launcher gives up and exits 1 (each service has its own). */
const STOP_DEADLINE_MS = 30_000;

/**
 * The distributed mode's processes, in reverse order of start: each service runs its own stop
 * steps on SIGTERM (libs/runtime), and the launcher waits for it to exit; FerretDB last.
 */
async function stopProcesses(code: number): Promise<void> {
  if (stopping) return;
  stopping = true;
  setTimeout(() => {
    log(`not stopped within ${STOP_DEADLINE_MS / 1000} s; exiting`);
    process.exit(1);
  }, STOP_DEADLINE_MS).unref();
  for (const { name, child } of [...children].reverse()) {
    if (child.exitCode !== null || child.signalCode !== null) continue;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    await exited;
    log(`stopped ${name}`);
  }
  await stopFerret?.().catch((error: unknown) => {
    log(`${error instanceof Error ? error.message : String(error)}`);
    code = 1;
  });
  finish(code);
}

function startService(name: string, env: Record<string, string>): ChildProcess {
  const child = spawn(process.execPath, [path.join(root, 'services', name, 'dist/main.js')], {
    env: { ...currentEnv(), ...env },
    stdio: 'inherit',
    // Own process group: Ctrl-C reaches only this launcher, which stops the services one by
    // one in reverse order of start (a second signal would cut their graceful stop short).
    detached: true,
  });
  child.once('exit', (code, signal) => {
    if (!stopping) {
      log(`${name} exited (${signal ?? code}); stopping the rest`);
      void stopProcesses(1);
    }
  });
  log(`started ${name} (pid ${child.pid})`);
  children.push({ name, child });
  return child;
}

async function runDistributedMode(
  config: LauncherConfig,
  dataDir: string,
  defaults: Record<string, string>,
  local: boolean,
): Promise<void> {
  // `on`, not `once`: Ctrl-C reaches npm and this process alike, and a second SIGINT
  // relayed by one of them must not cut the graceful stop short.
  process.on('SIGINT', () => void stopProcesses(0));
  process.on('SIGTERM', () => void stopProcesses(0));
  // Handed on as written: one URL, or the nodes of a cluster comma-separated.
  let rabbitmqUrl = config.rabbitmqUrl?.join(',');
  let mongodbUrl = config.mongodbUrl;
  if (!rabbitmqUrl) {
    if (!local || !(await portOpen(5672))) {
      throw new Error('no RabbitMQ: set RABBITMQ_URL, or run `npm run start:stack`');
    }
    rabbitmqUrl = 'amqp://guest:guest@127.0.0.1:5672';
    log(`using the local RabbitMQ at ${rabbitmqUrl}`);
  }
  if (!mongodbUrl) {
    if (!local) throw new Error('no MongoDB: set MONGODB_URL, or run `npm run start:stack`');
    buildFerretDb();
    // A FerretDB left running by an earlier start that did not stop cleanly owns the data dir.
    await stopFerretDb(path.join(dataDir, 'ferretdb', 'ferretdb.pid'), 'SIGTERM').catch(
      () => undefined,
    );
    const ferret = await startFerretDb({
      port: await freePortFrom(27017),
      dataDir: path.join(dataDir, 'ferretdb'),
    });
    stopFerret = () => stopFerretDb(ferret.pidFile, 'SIGTERM');
    mongodbUrl = ferret.url;
    log(`started FerretDB at ${mongodbUrl} (data in ${ferret.dataDir})`);
  }

  const shared = { ...defaults, RABBITMQ_URL: rabbitmqUrl, MONGODB_URL: mongodbUrl };
  startService('ingest-worker', shared);
  startService('archive-worker', shared);
  startService('gateway', shared);
  if (config.deviceName) startService('operator-agent', shared);
  else log('no DEVICE_NAME: the operator agent for this desktop is not started');
  announce(config.apiHost, config.apiPort, path.join(dataDir, 'gateway-token'));
}

function announce(apiHost: string, port: number, tokenFile: string | undefined): void {
  const token = tokenFile
    ? `token: cat ${tokenFile} (printed once when generated)`
    : 'tokens from GATEWAY_TOKENS';
  log(`console on http://${apiHost}:${port}/console, API reference on /docs`);
  log(`API on http://${apiHost}:${port} (${token}); Ctrl-C stops`);
}

async function main(): Promise<void> {
  const config = loadConfig(launcherConfigSpec);
  const dataDir = path.resolve(root, config.dataDir);
  // Both modes keep data there (the SQLite file, or FerretDB's, the archive, the token, keys).
  ensurePrivateDir(dataDir, 'data directory (DATA_DIR)');
  const stack = process.argv.includes('--stack');
  const { rabbitmqUrl, mongodbUrl } = config;
  if (!stack && (rabbitmqUrl === undefined) !== (mongodbUrl === undefined)) {
    throw new Error(
      'set both RABBITMQ_URL and MONGODB_URL (distributed mode) or neither (embedded mode)',
    );
  }
  const defaults = launchDefaults(config, dataDir);
  if (stack || rabbitmqUrl) return runDistributedMode(config, dataDir, defaults, stack);
  return runEmbeddedMode(config, { ...currentEnv(), ...defaults });
}

main().catch(async (error: unknown) => {
  log(`cannot start: ${error instanceof Error ? error.message : String(error)}`);
  // What the distributed mode started so far; the embedded mode's process ends with this one.
  await stopProcesses(1);
});
