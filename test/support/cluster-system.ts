/**
 * The distributed system spread over a test broker cluster: service processes (their built
 * main.js) each given RABBITMQ_URL as a node list in an order of its own, with
 * RABBITMQ_URL_ORDER=listed so it starts on the node the test chose and moves on to the next
 * one in its list when it loses it. One database (FerretDB) for all.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { BrokerCluster } from '../services';
import type { RabbitNode } from '../services/rabbitmq-node';
import { mongoUrl, uniqueName } from '../services';
import { operatorKeys, tokens } from './gateway';
import { startService, type ServiceProcess } from './processes';

export interface PlacedProcess {
  service: 'gateway' | 'ingest-worker' | 'archive-worker';
  /** The name its broker connection shows (rabbitmqctl list_connections). */
  connectionName: string;
  /** Its RABBITMQ_URL, in the order it tries the nodes. */
  nodes: RabbitNode[];
  process: ServiceProcess;
}

export interface PlacedGateway extends PlacedProcess {
  name: string;
  url: string;
}

export interface ClusterSystem {
  gateways: PlacedGateway[];
  ingestWorkers: PlacedProcess[];
  archiveWorker: PlacedProcess;
  all: PlacedProcess[];
  stop(): Promise<void>;
}

/** Where each process starts and where it goes next: the node lists, by node index. */
export interface Placement {
  ingestWorkers: number[][];
  archiveWorker: number[];
  gateways: number[][];
}

const connectionVariable = {
  gateway: 'GATEWAY_CONNECTION_NAME',
  'ingest-worker': 'INGEST_CONNECTION_NAME',
  'archive-worker': 'ARCHIVE_CONNECTION_NAME',
} as const;

const startedLog = {
  gateway: /gateway listening/,
  'ingest-worker': /consuming content batches/,
  'archive-worker': /archive worker started/,
} as const;

/**
 * Starts the ingest workers first (the first one declares the topology, so its node leads the
 * quorum queues at first), then the archive worker, then the gateways.
 */
export async function startClusterSystem(
  cluster: BrokerCluster,
  database: string,
  placement: Placement,
): Promise<ClusterSystem> {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'sf-cluster-system-'));
  const common = {
    RABBITMQ_URL_ORDER: 'listed',
    MONGODB_URL: mongoUrl(),
    MONGODB_DATABASE: database,
    DATA_DIR: dataDir,
    GATEWAY_TOKENS: JSON.stringify(Object.values(tokens)),
    GATEWAY_PORT: '0',
    GATEWAY_OPS_PORT: '0',
    GATEWAY_OPERATOR_SIGNING_KEY: operatorKeys.privateKey
      .export({ type: 'pkcs8', format: 'pem' })
      .toString(),
    INGEST_OPS_PORT: '0',
    INGEST_RETRY_INITIAL: '50',
    INGEST_RETRY_MAX: '500',
    ARCHIVE_OPS_PORT: '0',
    ARCHIVE_DIR: path.join(dataDir, 'archive'),
    ARCHIVE_ENABLED: 'false',
    ARCHIVE_INTERVAL: '1h',
  };
  const all: PlacedProcess[] = [];
  const stop = async () => {
    await Promise.all(all.map((placed) => placed.process.stop()));
    rmSync(dataDir, { recursive: true, force: true });
  };

  const start = async (service: PlacedProcess['service'], order: number[]) => {
    const nodes = order.map((i) => cluster.nodes[i]!);
    const connectionName = uniqueName(service);
    const process = startService(service, {
      ...common,
      RABBITMQ_URL: nodes.map((node) => node.url).join(','),
      [connectionVariable[service]]: connectionName,
    });
    const placed = { service, connectionName, nodes, process };
    all.push(placed);
    const started = await process.waitForLog(startedLog[service], 60_000);
    return { placed, started };
  };

  try {
    const ingestWorkers: PlacedProcess[] = [];
    for (const order of placement.ingestWorkers)
      ingestWorkers.push((await start('ingest-worker', order)).placed);
    const archiveWorker = (await start('archive-worker', placement.archiveWorker)).placed;
    const gateways: PlacedGateway[] = [];
    for (const [i, order] of placement.gateways.entries()) {
      const { placed, started } = await start('gateway', order);
      const name = `gw${String.fromCharCode(65 + i)}`;
      gateways.push({ ...placed, name, url: `http://127.0.0.1:${Number(started.port)}` });
    }
    return { gateways, ingestWorkers, archiveWorker, all, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}
