import {
  DeviceUnavailableError,
  queueNames,
  validators,
  ValidationError,
  type OperatorPresence,
} from '@screenfleet/contracts';
import type { Bus, Subscription } from '@screenfleet/bus';
import type { Logger } from '@screenfleet/runtime';

/**
 * Which operator agents are connected, from their heartbeats on the presence stream (every
 * gateway reads every heartbeat). Used only to choose the device when a request names none.
 */
export interface OperatorPresenceTracker {
  start(): Promise<void>;
  stop(): Promise<void>;
  /** The connected devices, sorted. */
  devices(now?: number): string[];
  /**
   * Every agent this gateway heard since it started reading the stream: its last heartbeat and
   * whether its last message was a goodbye (GET /devices derives online/unresponsive/offline).
   */
  sightings(): ReadonlyMap<string, AgentSighting>;
  /**
   * The named device, or the only connected one among `allowed` (a bound token's devices; all
   * when absent): 404 when none is, 400 naming them when several are. Devices outside `allowed`
   * are never named.
   */
  resolve(
    deviceName: string | undefined,
    options?: { allowed?: readonly string[] | undefined; now?: number },
  ): string;
}

export interface AgentSighting {
  /** When this gateway received the agent's last heartbeat (ms since the epoch); absent if none. */
  lastHeartbeatMs?: number;
  /** How long that heartbeat said to wait for the next (3 intervals). */
  ttlMs: number;
  /** The agent's last message was a goodbye (it stopped). */
  gone: boolean;
}

/** Sightings kept this long after the last message, so the map stays bounded. */
const FORGET_AFTER_MS = 30 * 24 * 3_600_000;

export function createOperatorPresence(deps: {
  bus: Pick<Bus, 'consume'>;
  logger: Logger;
}): OperatorPresenceTracker {
  const logger = deps.logger.child({ component: 'operator-presence' });
  const expiry = new Map<string, number>();
  const seen = new Map<string, AgentSighting>();
  let subscription: Subscription | undefined;

  const record = (presence: OperatorPresence): void => {
    const now = Date.now();
    const before = seen.get(presence.device_name);
    if (presence.online) {
      expiry.set(presence.device_name, now + presence.ttl_ms);
      seen.set(presence.device_name, { lastHeartbeatMs: now, ttlMs: presence.ttl_ms, gone: false });
    } else {
      expiry.delete(presence.device_name);
      seen.set(presence.device_name, { ...before, ttlMs: presence.ttl_ms, gone: true });
    }
  };

  const sightings = (): ReadonlyMap<string, AgentSighting> => {
    const horizon = Date.now() - FORGET_AFTER_MS;
    for (const [device, sighting] of seen) {
      if ((sighting.lastHeartbeatMs ?? 0) < horizon && sighting.gone) seen.delete(device);
    }
    return seen;
  };

  const devices = (now = Date.now()): string[] => {
    for (const [device, until] of expiry) if (until <= now) expiry.delete(device);
    return [...expiry.keys()].sort();
  };

  return {
    async start() {
      subscription = await deps.bus.consume<unknown>(
        queueNames.operatorPresence,
        ({ envelope }) => {
          const errors = validators.operatorPresence.check(envelope.payload);
          if (errors.length === 0) record(envelope.payload as OperatorPresence);
          else logger.warn({ errors }, 'ignoring an invalid presence message');
          // A stream keeps its entries whatever we answer; ack is flow control only.
          return Promise.resolve('ack');
        },
        { prefetch: 100 },
      );
    },
    async stop() {
      await subscription?.cancel();
      subscription = undefined;
    },
    devices,
    sightings,
    resolve(deviceName, { allowed, now } = {}) {
      if (deviceName !== undefined) return deviceName;
      const connected = devices(now).filter((device) => !allowed || allowed.includes(device));
      const [only] = connected;
      if (connected.length === 1 && only !== undefined) return only;
      if (connected.length === 0) {
        throw new DeviceUnavailableError(
          allowed
            ? `no operator agent is connected for this token's devices (${allowed.join(', ')})`
            : 'no operator agent is connected: start one on the desktop (see services/operator-agent)',
        );
      }
      throw new ValidationError(
        `device_name is required: ${connected.length} agents are connected`,
        [
          {
            path: 'device_name',
            rule: 'required',
            detail: `device_name is required when several agents are connected; connected: ${connected.join(', ')}`,
          },
        ],
      );
    },
  };
}
