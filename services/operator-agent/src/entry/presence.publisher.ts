import { createEnvelope, exchangeNames, type OperatorPresence } from '@screenfleet/contracts';
import type { Bus } from '@screenfleet/bus';
import type { Logger } from '@screenfleet/runtime';

/** Heartbeats count as missed after this many intervals. */
const MISSED_HEARTBEATS = 3;

/**
 * Tells the gateways this device has an agent: a heartbeat every intervalMs on the presence
 * exchange, a goodbye on stop. Gateways use it only to pick the device when a request names
 * none; sending a command never depends on it (an absent agent is a mandatory-publish return).
 */
export function createPresencePublisher(deps: {
  bus: Pick<Bus, 'publish'>;
  deviceName: string;
  intervalMs: number;
  logger: Logger;
}) {
  const logger = deps.logger.child({ component: 'presence' });
  let timer: NodeJS.Timeout | undefined;

  const announce = async (online: boolean): Promise<void> => {
    const payload: OperatorPresence = {
      device_name: deps.deviceName,
      online,
      ttl_ms: deps.intervalMs * MISSED_HEARTBEATS,
    };
    try {
      await deps.bus.publish(
        exchangeNames.operatorPresence,
        '',
        createEnvelope('operator.presence', payload),
      );
    } catch (err) {
      // The next heartbeat tries again; commands do not depend on presence.
      logger.warn({ err, online }, 'presence not published');
    }
  };

  return {
    async start(): Promise<void> {
      await announce(true);
      timer = setInterval(() => void announce(true), deps.intervalMs);
      timer.unref();
    },
    async stop(): Promise<void> {
      clearInterval(timer);
      timer = undefined;
      await announce(false);
    },
  };
}
