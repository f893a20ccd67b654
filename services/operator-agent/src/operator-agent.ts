import type { Bus, Subscription } from '@screenfleet/bus';
import type { Logger, Registry } from '@screenfleet/runtime';
import { agentConfigSpec } from './config';
import type { Desktop } from './desktop';
import type { KeyObject } from 'node:crypto';
import { CommandGuard } from './domain/command-guard';
import { systemClock } from './domain/deadline';
import { SnapshotStore } from './domain/snapshots';
import { createCommandHandler } from './entry/command.handler';
import { createPresencePublisher } from './entry/presence.publisher';
import { createAgentMetrics } from './metrics';

export interface OperatorAgentDeps {
  bus: Pick<Bus, 'serveDevice' | 'publish'>;
  desktop: Desktop;
  /** The routing key this agent serves: gateways address it by this name. */
  deviceName: string;
  /**
   * The gateway's Ed25519 public key: only commands it signed for this device are run, each
   * once (OPERATOR_COMMAND_PUBLIC_KEY).
   */
  commandKey: KeyObject;
  /** How long a listing stays usable for press-key-by-index. */
  snapshotTtlMs: number;
  logger: Logger;
  registry: Registry;
  /** Presence heartbeat interval; default OPERATOR_HEARTBEAT_INTERVAL's (config.ts). */
  heartbeatMs?: number;
}

export interface OperatorAgent {
  start(): Promise<void>;
  /** Says goodbye, stops taking commands and waits for the one in hand. The desktop stays open. */
  stop(): Promise<void>;
}

export function createOperatorAgent(deps: OperatorAgentDeps): OperatorAgent {
  const logger = deps.logger.child({ component: 'operator-agent', device: deps.deviceName });
  const handle = createCommandHandler({
    desktop: deps.desktop,
    snapshots: new SnapshotStore(deps.snapshotTtlMs),
    metrics: createAgentMetrics(deps.registry),
    logger,
    guard: new CommandGuard(deps.commandKey, deps.deviceName, systemClock),
  });
  const presence = createPresencePublisher({
    bus: deps.bus,
    deviceName: deps.deviceName,
    intervalMs: deps.heartbeatMs ?? agentConfigSpec.heartbeat.default,
    logger,
  });
  let subscription: Subscription | undefined;

  return {
    async start() {
      subscription = await deps.bus.serveDevice(deps.deviceName, handle);
      await presence.start();
      logger.info({ snapshotTtlMs: deps.snapshotTtlMs }, 'serving operator commands');
    },
    async stop() {
      await presence.stop();
      await subscription?.cancel();
      subscription = undefined;
    },
  };
}
