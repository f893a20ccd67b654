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
   * The named device, or the only connected one among `allowed` (a bound token's devices; all
   * when absent): 404 when none is, 400 naming them when several are. Devices outside `allowed`
   * are never named.
   */
  resolve(
    deviceName: string | undefined,
    options?: { allowed?: readonly string[] | undefined; now?: number },
  ): string;
}

export function createOperatorPresence(deps: {
  bus: Pick<Bus, 'consume'>;
  logger: Logger;
}): OperatorPresenceTracker {
  const logger = deps.logger.child({ component: 'operator-presence' });
  const expiry = new Map<string, number>();
  let subscription: Subscription | undefined;

  const record = (presence: OperatorPresence): void => {
    if (presence.online) expiry.set(presence.device_name, Date.now() + presence.ttl_ms);
    else expiry.delete(presence.device_name);
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
