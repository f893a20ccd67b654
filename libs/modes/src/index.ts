export type { BusNeeds, RetiredQueue, Service, ServicePorts, ServiceRunning } from './service';
export { connectCommandBus, openDistributedStores, runDistributed } from './distributed';
export {
  embeddedDatabaseFile,
  openEmbeddedStores,
  runEmbedded,
  type EmbeddedOptions,
  type StartInProcess,
} from './embedded';
export { signalTokensChanged, watchTokensChanged } from './tokens-changed-file';
