/**
 * The distributed mode: each service in its own process (its main.ts), on the RabbitMQ broker
 * (RABBITMQ_URL: one node, or the nodes of a cluster) and the MongoDB-protocol store
 * (MONGODB_URL). The one place that chooses these adapters, for the services and the commands.
 */
import { topology } from '@screenfleet/contracts';
import { connectServiceBus, createAmqpBus, retireQueue, type Bus } from '@screenfleet/bus';
import {
  readinessOf,
  runService,
  type BrokerNodeOrder,
  type Config,
  type ConfigSpec,
  type HostedConfig,
  type ServiceContext,
  type ServiceHostOptions,
} from '@screenfleet/runtime';
import type { ArchiveStateStore, AuditStore, ContentStore, TokenStore } from '@screenfleet/storage';
import type { Service, ServicePorts, ServiceRunning } from './service';
import { storageAdapters } from './storage-adapters';

/** The server variables a service's spec has (SERVER_VARS): the broker's, and the store's when it keeps data. */
interface ServerConfig {
  readonly rabbitmqUrl: readonly string[];
  readonly rabbitmqUrlOrder: BrokerNodeOrder;
  readonly connectionName?: string;
  readonly mongodbUrl?: string;
  readonly database?: string;
}

/**
 * A service's main.ts: the service in this process on the broker and the store its config names,
 * ready while its broker connection is (and its own checks pass).
 */
export function runDistributed<S extends ConfigSpec, R extends ServiceRunning>(
  service: Service<S, R> & {
    // The host's variables (serviceConfigSpec) and the server variables this mode reads.
    spec: S &
      (Config<S> extends HostedConfig ? unknown : never) &
      (Config<S> extends ServerConfig ? unknown : never);
  },
  options?: ServiceHostOptions,
): Promise<void> {
  return runService<S>(
    service.name,
    service.spec,
    async (host) => {
      const ports = distributedPorts(service.name, host as ServiceContext<ServerConfig>);
      const running = await service.start(host, ports);
      return {
        readiness: () => readinessOf({ broker: ports.connected(), ...running.checks?.() }),
        ...(running.announce ? { announce: running.announce } : {}),
      };
    },
    options,
  );
}

function distributedPorts(
  service: string,
  host: ServiceContext<ServerConfig>,
): ServicePorts & { connected(): boolean } {
  const { config, logger, onStop } = host;
  const identity = config.connectionName ?? service;
  const storeOptions = () => {
    const { mongodbUrl: url, database } = config;
    if (!url || !database) throw new Error(`${service} has no MONGODB_URL in its config`);
    return { url, database, logger };
  };
  let bus: Bus | undefined;
  return {
    identity,
    storeGroupsWrites: false,
    async bus({ retire = [], ...needs }) {
      // Connects and adds 'close the broker connection'.
      bus = await connectServiceBus(host, {
        url: config.rabbitmqUrl,
        connectionName: identity,
        ...needs,
      });
      for (const { queue, exchange, bindingKeys } of retire) {
        const moved = await retireQueue({
          url: config.rabbitmqUrl,
          queue,
          exchange,
          bindingKeys,
          connectionName: `${identity}-migrate`,
        });
        if (moved > 0) logger.info({ moved, queue }, 'moved batches from the old queue');
      }
      return bus;
    },
    async contentStore(): Promise<ContentStore> {
      const store = (await storageAdapters()).createMongoContentStore(storeOptions());
      onStop('close the content store', () => store.close());
      return store;
    },
    async archiveStateStore(): Promise<ArchiveStateStore> {
      const store = (await storageAdapters()).createMongoArchiveStateStore(storeOptions());
      onStop('close the state store', () => store.close());
      return store;
    },
    async tokenStore(): Promise<TokenStore> {
      const store = (await storageAdapters()).createMongoTokenStore(storeOptions());
      onStop('close the token store', () => store.close());
      return store;
    },
    async auditStore(): Promise<AuditStore> {
      const store = (await storageAdapters()).createMongoAuditStore(storeOptions());
      onStop('close the audit store', () => store.close());
      return store;
    },
    connected: () => bus?.isConnected() ?? false,
  };
}

/** The distributed mode's stores, for a command that works on them with no service around it. */
export async function openDistributedStores(options: { url: string; database: string }) {
  const {
    createMongoArchiveStateStore,
    createMongoAuditStore,
    createMongoContentStore,
    createMongoTokenStore,
  } = await storageAdapters();
  const content = createMongoContentStore(options);
  const state = createMongoArchiveStateStore(options);
  const tokens = createMongoTokenStore(options);
  const audit = createMongoAuditStore(options);
  return {
    content,
    state,
    tokens,
    audit,
    async close() {
      await audit.close();
      await tokens.close();
      await state.close();
      await content.close();
    },
  };
}

/**
 * The distributed mode's broker, for a command that asks the running services (`npm run
 * tokens`): connected with the whole topology, closed by the caller.
 */
export function connectCommandBus(options: {
  url: readonly string[];
  connectionName: string;
}): Promise<Bus> {
  return createAmqpBus({ ...options, topology, nodeOrder: 'listed' });
}
