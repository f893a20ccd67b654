/**
 * One RabbitMQ node of a test cluster, run straight from the Debian package's scripts as
 * ../shared/notes/rabbitmq.md checked it: its own node name, ports, data and log directories,
 * in its own process group, so it can be killed as a crash would and started again on the same
 * data. The machine's own node (rabbit@localhost on 5672) is never touched.
 */
import { execFile, spawn } from 'node:child_process';
import { closeSync, mkdirSync, openSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { promisify } from 'node:util';
import { waitFor } from '@screenfleet/runtime';
import { portOpen } from '../../bin/ports';

/** The package's own scripts: /usr/sbin's wrappers switch to the rabbitmq user and its paths. */
export const RABBITMQ_BIN = '/usr/lib/rabbitmq/bin';

const run = promisify(execFile);

export interface RabbitNodeSpec {
  /** e.g. sfc3f2a1n1@localhost */
  name: string;
  /** AMQP port on 127.0.0.1. */
  port: number;
  /** Erlang distribution port (the default, 25672, is the machine's own node's). */
  distPort: number;
  /** This node's data and log directories go under it. */
  dir: string;
  /** Shared by every node of the cluster and by rabbitmqctl: it holds the Erlang cookie. */
  home: string;
  /** The rabbitmq-env.conf of the cluster, so /etc/rabbitmq's (NODENAME=rabbit@...) is not read. */
  confEnvFile: string;
}

/** The environment rabbitmqctl needs to reach the cluster's nodes: their cookie, not /etc's. */
export function ctlEnv(spec: Pick<RabbitNodeSpec, 'home' | 'confEnvFile'>): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH ?? '',
    HOME: spec.home,
    RABBITMQ_CONF_ENV_FILE: spec.confEnvFile,
  };
}

export class RabbitNode {
  private pid: number | undefined;

  constructor(readonly spec: RabbitNodeSpec) {
    mkdirSync(path.join(spec.dir, 'log'), { recursive: true });
    writeFileSync(
      this.configFile,
      // 5672 is pinned for the machine's node in /etc/rabbitmq/rabbitmq.conf, hence a file of
      // our own; guest may connect from 127.0.0.1 anyway, loopback_users only says so.
      `listeners.tcp.local = 127.0.0.1:${spec.port}\nloopback_users = none\n`,
    );
    // No plugins: a faster start, nothing listening beyond AMQP and distribution.
    writeFileSync(path.join(spec.dir, 'enabled_plugins'), '[].\n');
  }

  get name(): string {
    return this.spec.name;
  }

  get url(): string {
    return `amqp://guest:guest@127.0.0.1:${this.spec.port}`;
  }

  get running(): boolean {
    return this.pid !== undefined && groupAlive(this.pid);
  }

  private get configFile(): string {
    return path.join(this.spec.dir, 'rabbitmq.conf');
  }

  /** Starts the node (on the data it has) and resolves once it accepts AMQP connections. */
  async start(timeoutMs = 60_000): Promise<void> {
    const { spec } = this;
    const output = openSync(path.join(spec.dir, 'log', 'stdout.log'), 'a');
    const child = spawn(path.join(RABBITMQ_BIN, 'rabbitmq-server'), [], {
      env: {
        ...ctlEnv(spec),
        RABBITMQ_NODENAME: spec.name,
        RABBITMQ_DIST_PORT: String(spec.distPort),
        RABBITMQ_MNESIA_BASE: path.join(spec.dir, 'mnesia'),
        RABBITMQ_LOG_BASE: path.join(spec.dir, 'log'),
        RABBITMQ_ENABLED_PLUGINS_FILE: path.join(spec.dir, 'enabled_plugins'),
        RABBITMQ_CONFIG_FILE: this.configFile,
        // Distribution on loopback only: nothing of the test cluster is reachable from outside.
        ERL_FLAGS: '-kernel inet_dist_use_interface {127,0,0,1}',
      },
      // Its own process group (setsid): kill() ends the script, beam and its helpers together.
      detached: true,
      stdio: ['ignore', output, output],
    });
    closeSync(output);
    child.unref();
    this.pid = child.pid;
    const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
    let exitCode: number | null | undefined;
    void exited.then((code) => (exitCode = code));
    // The AMQP listener opens last in the boot: polling a port is cheap, a CLI call is a VM.
    await waitFor(
      () => {
        if (exitCode !== undefined)
          throw new Error(`${spec.name} exited (${exitCode}) while starting; see ${spec.dir}/log`);
        return portOpen(spec.port);
      },
      { timeoutMs, intervalMs: 100, what: `${spec.name} to accept AMQP on ${spec.port}` },
    );
    await this.ctl(['await_startup', '--timeout', String(Math.ceil(timeoutMs / 1000))]);
  }

  /** SIGKILL to the whole process group, as a crash would; resolves once every process is gone. */
  async kill(): Promise<void> {
    const pid = this.pid;
    if (pid === undefined) return;
    try {
      process.kill(-pid, 'SIGKILL');
    } catch {
      // already gone
    }
    await waitFor(() => !groupAlive(pid), {
      timeoutMs: 10_000,
      intervalMs: 25,
      what: `${this.name} (process group ${pid}) to end`,
    });
    // Its socket closes with the process; wait for it so a restart can take the port again.
    await waitFor(async () => !(await portOpen(this.spec.port)), {
      timeoutMs: 10_000,
      what: `port ${this.spec.port} of ${this.name} to close`,
    });
  }

  /** For a last-resort cleanup in a process 'exit' handler, where nothing can be awaited. */
  killNow(): void {
    if (this.pid === undefined) return;
    try {
      process.kill(-this.pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }

  /** rabbitmqctl against this node; its stdout. */
  async ctl(args: string[], timeoutMs = 60_000): Promise<string> {
    const { stdout } = await run(
      path.join(RABBITMQ_BIN, 'rabbitmqctl'),
      ['-n', this.name, ...args],
      {
        env: ctlEnv(this.spec),
        timeout: timeoutMs,
      },
    );
    return stdout;
  }
}

function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * A port free on 127.0.0.1 below the kernel's ephemeral range (32768 and up): a node killed and
 * started again must find its ports free, and an ephemeral port could be taken meanwhile by any
 * outgoing connection of the test's own traffic.
 */
export async function freeFixedPort(taken: ReadonlySet<number>): Promise<number> {
  for (let attempt = 0; attempt < 200; attempt++) {
    const port = 20_000 + Math.floor(Math.random() * 12_000);
    // 25672 is the machine node's distribution port.
    if (taken.has(port) || port === 25_672) continue;
    if (await canListen(port)) return port;
  }
  throw new Error('no free port found between 20000 and 32000');
}

function canListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}
