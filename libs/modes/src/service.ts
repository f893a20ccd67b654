import type { Bus } from '@screenfleet/bus';
import type { Topology } from '@screenfleet/contracts';
import type { ConfigSpec, ServiceContext, SettingsConfig } from '@screenfleet/runtime';
import type { ArchiveStateStore, AuditStore, ContentStore, TokenStore } from '@screenfleet/storage';

/** A queue an earlier topology declared, whose messages go to the current one. */
export interface RetiredQueue {
  queue: string;
  /** Where its messages are published again. */
  exchange: string;
  bindingKeys: string[];
}

/** The bus a service asks its mode for. */
export interface BusNeeds {
  topology: Topology;
  /** The name the broker shows; default the mode's identity (the service's *_CONNECTION_NAME). */
  connectionName?: string;
  /** How long a publish waits for the broker's confirm (the in-process bus has the mode's own). */
  publishTimeoutMs?: number;
  /**
   * Queues of an earlier topology this service empties into the current one once connected: a
   * broker keeps them across versions, the in-process bus never had them.
   */
  retire?: RetiredQueue[];
}

/**
 * The ports a mode gives a service. The service asks for those it uses, in the order it starts
 * them; what a port opens of its own adds its stop step then (see StopSteps).
 */
export interface ServicePorts {
  /** How this process names itself to what it shares: its broker connection, the archive lease. */
  readonly identity: string;
  /** True when the content store commits concurrent writes together itself (SQLite's writer). */
  readonly storeGroupsWrites: boolean;
  bus(needs: BusNeeds): Promise<Bus>;
  contentStore(): Promise<ContentStore>;
  archiveStateStore(): Promise<ArchiveStateStore>;
  /** Tokens and enrolment codes (docs/adr/0019), in the same store as the content. */
  tokenStore(): Promise<TokenStore>;
  /** Audit rows (docs/adr/0019), in the same store as the content. */
  auditStore(): Promise<AuditStore>;
}

/** What a service gives back once it runs. */
export interface ServiceRunning {
  /**
   * Its own /readyz checks besides its ports' (the agent's desktop), in the distributed mode
   * where the process is the service (see runEmbedded for the embedded mode's answer).
   */
  checks?: () => Record<string, boolean | string>;
  /** Called once the ops server listens: the service's start line. */
  announce?: (ops: { port: number }) => void;
}

/**
 * A service as both modes run it: its name, its config spec, and its one start function, which
 * takes the config (without the server variables, SERVER_VARS, which only a mode reads) and the
 * mode's ports, adds its stop steps and says how it runs.
 */
export interface Service<S extends ConfigSpec, R extends ServiceRunning = ServiceRunning> {
  name: string;
  spec: S;
  start(host: ServiceContext<SettingsConfig<S>>, ports: ServicePorts): Promise<R>;
}
