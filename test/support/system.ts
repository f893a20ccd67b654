/**
 * The whole system in either mode, started as `npm start` starts it, for the end-to-end suites
 * that must pass in both (ARCHITECTURE.md: "Both modes pass the same end-to-end tests"):
 *
 * - distributed: gateway, ingest worker and archive worker as separate processes (their built
 *   main.js) on this run's RabbitMQ (a vhost of its own) and FerretDB (a database of its own);
 * - embedded: the launcher (`bin/start.ts`) with no broker or database variables: one process, the in-process
 *   bus and a SQLite file in a temp data directory.
 *
 * Either way the test reads back through the same ContentStore port the workers write with, opened
 * where the mode chooses its adapters (libs/modes).
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import {
  embeddedDatabaseFile,
  openDistributedStores,
  openEmbeddedStores,
} from '@screenfleet/modes';
import type { ContentStore } from '@screenfleet/storage';
import { databaseName, isolatedBroker, mongoUrl } from '../services';
import { operatorKeys, operatorPublicKeyPem, tokens } from './gateway';
import { noRateLimits, startService, type ServiceProcess } from './processes';

export type Mode = 'distributed' | 'embedded';
export const modes: Mode[] = ['distributed', 'embedded'];

export interface RunningSystem {
  mode: Mode;
  url: string;
  /** What the system stores, read through the port its workers write with. */
  content: ContentStore;
  dataDir: string;
  archiveDir: string;
  /** Distributed mode with `gateways` > 1: every gateway's URL (url is the first). */
  urls: string[];
  /**
   * The environment a command (`npm run tokens`) needs to act on this system as a user's would:
   * the broker's URL (distributed), the data directory (embedded).
   */
  commandEnv: Record<string, string>;
  /** Distributed mode: the MongoDB database this system stores in (on mongoUrl()). */
  database?: string;
  /** The gateway's log so far, as text (embedded: the launcher's whole output). */
  gatewayLog(): string;
  /** Every process's log so far, as text. */
  allLogs(): string;
  /** Distributed mode only (embedded runs them in one process): stops one service's process. */
  stopService?: (service: 'ingest-worker' | 'archive-worker') => Promise<void>;
  stop(): Promise<void>;
}

export interface SystemOptions {
  /** Extra environment for every process (ARCHIVE_*, DEVICE_NAME, DISPLAY...). */
  env?: Record<string, string>;
  /** Start an operator agent for this device (the distributed mode starts its process). */
  agent?: { device: string; env: Record<string, string> };
  /** Distributed mode: how many gateway processes (default 1). */
  gateways?: number;
}

const root = path.resolve(__dirname, '../..');

/** The test tokens as GATEWAY_TOKENS: every mode is called with the same ones. */
const gatewayTokens = JSON.stringify(Object.values(tokens));

export async function startSystem(mode: Mode, options: SystemOptions = {}): Promise<RunningSystem> {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), `sf-${mode}-`));
  const archiveDir = path.join(dataDir, 'archive');
  const common = {
    GATEWAY_TOKENS: gatewayTokens,
    GATEWAY_PORT: '0',
    GATEWAY_OPS_PORT: '0',
    DATA_DIR: dataDir,
    ARCHIVE_DIR: archiveDir,
    LOG_LEVEL: 'info',
    ...options.env,
  };
  const removeDir = () => rmSync(dataDir, { recursive: true, force: true });
  return mode === 'embedded'
    ? startEmbeddedSystem(common, options, dataDir, archiveDir, removeDir)
    : startDistributedSystem(common, options, dataDir, archiveDir, removeDir);
}

async function startDistributedSystem(
  common: Record<string, string>,
  options: SystemOptions,
  dataDir: string,
  archiveDir: string,
  removeDir: () => void,
): Promise<RunningSystem> {
  const broker = await isolatedBroker();
  const database = databaseName('system');
  const shared = {
    ...common,
    RABBITMQ_URL: broker.url,
    MONGODB_URL: mongoUrl(),
    MONGODB_DATABASE: database,
    INGEST_OPS_PORT: '0',
    ARCHIVE_OPS_PORT: '0',
    OPERATOR_OPS_PORT: '0',
  };
  const processes: ServiceProcess[] = [];
  const stop = async () => {
    for (const p of processes.reverse()) await p.stop();
    await stores.close();
    await broker.remove();
    removeDir();
  };
  const stores = await openDistributedStores({ url: mongoUrl(), database });
  try {
    const ingest = startService('ingest-worker', shared);
    processes.push(ingest);
    await ingest.waitForLog(/consuming content batches/);
    const archiver = startService('archive-worker', shared);
    processes.push(archiver);
    await archiver.waitForLog(/archive worker started/);
    if (options.agent) {
      const agent = startService('operator-agent', {
        ...shared,
        ...options.agent.env,
        DEVICE_NAME: options.agent.device,
        OPERATOR_COMMAND_PUBLIC_KEY: operatorPublicKeyPem,
      });
      processes.push(agent);
      await agent.waitForLog(/operator agent started/, 30_000);
    }
    const gateways: ServiceProcess[] = [];
    const urls: string[] = [];
    for (let i = 0; i < (options.gateways ?? 1); i++) {
      const gateway = startService('gateway', {
        ...shared,
        GATEWAY_CONNECTION_NAME: `gateway-${i}`,
        GATEWAY_OPERATOR_SIGNING_KEY: signingKeyPem(),
      });
      processes.push(gateway);
      gateways.push(gateway);
      const listening = await gateway.waitForLog(/gateway listening/);
      urls.push(`http://127.0.0.1:${Number(listening.port)}`);
    }
    const byName = { 'ingest-worker': ingest, 'archive-worker': archiver };
    const logOf = (p: ServiceProcess) => p.lines.map((line) => JSON.stringify(line)).join('\n');
    return {
      mode: 'distributed',
      url: urls[0]!,
      urls,
      commandEnv: { RABBITMQ_URL: broker.url },
      database,
      content: stores.content,
      dataDir,
      archiveDir,
      gatewayLog: () => gateways.map(logOf).join('\n'),
      allLogs: () => processes.map(logOf).join('\n'),
      stopService: async (service) => {
        await byName[service].stop('SIGTERM');
      },
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}

async function startEmbeddedSystem(
  common: Record<string, string>,
  options: SystemOptions,
  dataDir: string,
  archiveDir: string,
  removeDir: () => void,
): Promise<RunningSystem> {
  const launcher = startLauncher({
    ...common,
    GATEWAY_OPERATOR_SIGNING_KEY: signingKeyPem(),
    ...(options.agent
      ? {
          ...options.agent.env,
          DEVICE_NAME: options.agent.device,
          OPERATOR_COMMAND_PUBLIC_KEY: operatorPublicKeyPem,
        }
      : {}),
  });
  let stores: Awaited<ReturnType<typeof openEmbeddedStores>> | undefined;
  const stop = async () => {
    const code = await launcher.stop('SIGINT');
    await stores?.close();
    removeDir();
    if (code !== 0)
      throw new Error(`the launcher did not stop cleanly (${code}):\n${launcher.output()}`);
  };
  try {
    const port = await launcher.apiPort;
    stores = await openEmbeddedStores(embeddedDatabaseFile(dataDir));
    return {
      mode: 'embedded',
      url: `http://127.0.0.1:${port}`,
      urls: [`http://127.0.0.1:${port}`],
      commandEnv: { DATA_DIR: dataDir },
      content: stores.content,
      dataDir,
      archiveDir,
      gatewayLog: () => launcher.output(),
      allLogs: () => launcher.output(),
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}

export interface Launcher {
  /** The API's port, once the launcher announced it. */
  apiPort: Promise<number>;
  pid: number;
  /** Resolves with the exit code (null when killed by a signal). */
  exited: Promise<number | null>;
  output(): string;
  /** The ops server's URL (metrics, health), once the launcher announced its API. */
  opsUrl(): string;
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/**
 * The node options `npm start` runs the launcher with, read from package.json's start script
 * (their one home), so that tests and benches start what production runs.
 */
function startNodeOptions(cwd: string): string[] {
  const { scripts } = JSON.parse(readFileSync(path.join(cwd, 'package.json'), 'utf8')) as {
    scripts: Record<string, string>;
  };
  const command = /\bnode((?:\s+--\S+)*)\s+bin\/dist\/start\.js/.exec(scripts.start ?? '');
  if (!command)
    throw new Error("package.json's start script no longer runs node bin/dist/start.js");
  return command[1]!.split(/\s+/).filter(Boolean);
}

/**
 * `npm start`'s launcher (bin/dist/start.js, compiled as production runs it: `npm run test:int`
 * builds first, with the start script's node options) with exactly this environment.
 */
export function startLauncher(env: Record<string, string>, cwd = root): Launcher {
  const script = path.join(cwd, 'bin/dist/start.js');
  const child = spawn(process.execPath, [...startNodeOptions(cwd), script], {
    cwd,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...noRateLimits, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  const apiPort = new Promise<number>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`launcher did not announce its API:\n${output}`)),
      60_000,
    );
    for (const stream of [child.stdout, child.stderr]) {
      readline.createInterface({ input: stream }).on('line', (line) => {
        // Kept whole up to 4 MB: tests scan it for what must never be logged.
        output = (output + line + '\n').slice(-4_000_000);
        const announced = /API on http:\/\/[^:]+:(\d+)/.exec(line);
        if (announced) {
          clearTimeout(timer);
          resolve(Number(announced[1]));
        }
      });
    }
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`launcher exited (${code}) before announcing its API:\n${output}`));
    });
  });
  apiPort.catch(() => undefined);
  return {
    apiPort,
    pid: child.pid!,
    exited,
    output: () => output,
    opsUrl() {
      // Announced before the API line: there once apiPort resolved.
      const port = /metrics on http:\/\/[^:]+:(\d+)/.exec(output)?.[1];
      if (!port) throw new Error(`the launcher announced no ops port:\n${output}`);
      return `http://127.0.0.1:${port}`;
    },
    async stop(signal = 'SIGINT') {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return exited;
    },
  };
}

function signingKeyPem(): string {
  return operatorKeys.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
}
