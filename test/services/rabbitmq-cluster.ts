/**
 * A real RabbitMQ cluster on this host for the tests that need one (ARCHITECTURE.md "Scaling
 * out"): three nodes with their own names, ports, data and log directories in a temp directory,
 * one cookie, joined with `rabbitmqctl join_cluster` (../shared/notes/rabbitmq.md). A test file
 * starts it in beforeAll and stops it in afterAll; only the processes it started are killed.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { waitFor } from '@screenfleet/runtime';
import { freeFixedPort, RABBITMQ_BIN, RabbitNode } from './rabbitmq-node';

/** A queue as the cluster sees it: where its replicas are (quorum queues, streams), its depth. */
export interface QueueState {
  leader: string;
  members: string[];
  online: string[];
  /** Ready and unacked together. */
  messages: number;
}

export interface BrokerCluster {
  nodes: RabbitNode[];
  /** Every node's AMQP URL (guest, vhost /), in node order. */
  urls: string[];
  /** kill -9 of the node's process group; resolves once it is gone. */
  kill(node: RabbitNode): Promise<void>;
  /** Starts a killed node again on its data; it rejoins the cluster by itself. */
  restart(node: RabbitNode): Promise<void>;
  /** Every queue of the cluster, as a running node sees it: one rabbitmqctl call. */
  queues(): Promise<Map<string, QueueState>>;
  /** Where a queue's replicas are, as a running node sees it. */
  replicas(queue: string): Promise<QueueState>;
  /** The node that leads a quorum queue (or stream). */
  leaderOf(queue: string): Promise<RabbitNode>;
  /** Every connection's name and the node it is on (by its server port): one rabbitmqctl call. */
  connections(): Promise<Map<string, RabbitNode>>;
  /** The node the connection that named itself `connectionName` is on. */
  nodeOfConnection(connectionName: string): Promise<RabbitNode>;
  /** Messages in a queue, ready and unacked together. */
  depth(queue: string): Promise<number>;
  /** Kills every node and removes the directory. */
  stop(): Promise<void>;
}

/** Starts the nodes at once, then joins the second and later ones to the first. */
export async function startBrokerCluster(size = 3): Promise<BrokerCluster> {
  if (!existsSync(path.join(RABBITMQ_BIN, 'rabbitmq-server')))
    throw new Error(
      `a broker cluster needs RabbitMQ installed on this host (Debian package rabbitmq-server): no ${RABBITMQ_BIN}/rabbitmq-server`,
    );
  const dir = mkdtempSync(path.join(os.tmpdir(), 'sf-rabbit-cluster-'));
  const home = path.join(dir, 'home');
  mkdirSync(home);
  // One cookie for every node and for rabbitmqctl: nodes with different cookies cannot cluster.
  writeFileSync(path.join(home, '.erlang.cookie'), randomBytes(16).toString('hex').toUpperCase(), {
    mode: 0o400,
  });
  const confEnvFile = path.join(dir, 'rabbitmq-env.conf');
  writeFileSync(confEnvFile, 'ERL_EPMD_ADDRESS=127.0.0.1\n');
  // Names of this run's own: a crashed earlier run's nodes (or another checkout's) never clash.
  const prefix = `sfc${randomBytes(3).toString('hex')}`;
  const taken = new Set<number>();
  const nodes: RabbitNode[] = [];
  for (let i = 1; i <= size; i++) {
    const port = await freeFixedPort(taken);
    taken.add(port);
    const distPort = await freeFixedPort(taken);
    taken.add(distPort);
    nodes.push(
      new RabbitNode({
        name: `${prefix}n${i}@localhost`,
        port,
        distPort,
        dir: path.join(dir, `n${i}`),
        home,
        confEnvFile,
      }),
    );
  }
  // A jest worker that dies without afterAll must not leave Erlang VMs behind.
  const killAll = () => nodes.forEach((node) => node.killNow());
  process.once('exit', killAll);
  const stop = async () => {
    process.off('exit', killAll);
    await Promise.all(nodes.map((node) => node.kill()));
    rmSync(dir, { recursive: true, force: true });
  };

  try {
    await Promise.all(nodes.map((node) => node.start()));
    const [first, ...others] = nodes;
    for (const node of others) {
      await node.ctl(['stop_app']);
      await node.ctl(['join_cluster', first!.name]);
      await node.ctl(['start_app']);
    }
  } catch (error) {
    await stop();
    throw error;
  }

  /** rabbitmqctl on the first node that is running: the cluster answers from any of them. */
  async function ctl(args: string[]): Promise<string> {
    const running = nodes.filter((node) => node.running);
    let last: unknown = new Error('no node of the cluster is running');
    for (const node of running) {
      try {
        return await node.ctl(['-q', ...args]);
      } catch (error) {
        last = error;
      }
    }
    throw last;
  }

  const byName = (name: string) => {
    const node = nodes.find((n) => n.name === name);
    if (!node) throw new Error(`${name} is not a node of this cluster`);
    return node;
  };

  // Each rabbitmqctl call starts an Erlang VM (about half a second of CPU): one call answers
  // for every queue, one for every connection.
  async function queues(): Promise<Map<string, QueueState>> {
    const rows = JSON.parse(
      await ctl([
        'list_queues',
        'name',
        'leader',
        'members',
        'online',
        'messages',
        '--formatter',
        'json',
      ]),
    ) as Array<{
      name: string;
      leader: string;
      members: string[] | '';
      online: string[] | '';
      messages: number | '';
    }>;
    return new Map(
      rows.map((r) => [
        r.name,
        {
          leader: r.leader,
          members: r.members || [],
          online: r.online || [],
          messages: Number(r.messages || 0),
        },
      ]),
    );
  }

  async function queue(name: string): Promise<QueueState> {
    const state = (await queues()).get(name);
    if (!state) throw new Error(`no queue ${name} in the cluster`);
    return state;
  }

  async function connections(): Promise<Map<string, RabbitNode>> {
    const rows = JSON.parse(
      await ctl(['list_connections', 'port', 'client_properties', '--formatter', 'json']),
    ) as Array<{ port: number; client_properties: Array<[string, string, unknown]> }>;
    const located = new Map<string, RabbitNode>();
    for (const row of rows) {
      const name = row.client_properties.find(([key]) => key === 'connection_name')?.[2];
      const node = nodes.find((n) => n.spec.port === row.port);
      if (typeof name === 'string' && node) located.set(name, node);
    }
    return located;
  }

  return {
    nodes,
    urls: nodes.map((node) => node.url),
    kill: (node) => node.kill(),
    async restart(node) {
      await node.start();
      // Back in the cluster: every node it knew sees it running again.
      await waitFor(
        async () => {
          const status = JSON.parse(await ctl(['cluster_status', '--formatter', 'json'])) as {
            running_nodes: string[];
          };
          return status.running_nodes.length === nodes.length;
        },
        { timeoutMs: 60_000, intervalMs: 500, what: `${node.name} to rejoin the cluster` },
      );
    },
    queues,
    replicas: queue,
    async leaderOf(name) {
      const { leader } = await queue(name);
      if (!leader) throw new Error(`queue ${name} has no leader (not a quorum queue or stream?)`);
      return byName(leader);
    },
    connections,
    async nodeOfConnection(connectionName) {
      const node = (await connections()).get(connectionName);
      if (!node) throw new Error(`no connection named "${connectionName}" on the cluster`);
      return node;
    },
    depth: async (name) => (await queue(name)).messages,
    stop,
  };
}
