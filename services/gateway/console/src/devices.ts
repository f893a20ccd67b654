import type { Session } from './session.js';

/**
 * The device names the console suggests where a device is picked (Search's device field, the
 * Operator's device). Today: a bound token's own devices, since no route lists the fleet.
 *
 * Extension point for GET /devices (the fleet API): return its names here (and for the
 * Operator, only devices whose agent is online), and every picker offers them.
 */
export function knownDevices(session: Session): Promise<readonly string[]> {
  return Promise.resolve(session.who.devices ?? []);
}
