import { fleetScope, onlineDeviceNames } from './fleet.js';
import { fetchFleet } from './fleet-fetch.js';
import { can, type Session } from './session.js';

/**
 * The device names the console suggests where a device is picked: GET /devices' names (for
 * the Operator, `online: true`, only devices whose agent is online). A token that may not list
 * the fleet, or a gateway that does not answer, gets a bound token's own devices: a suggestion
 * is a convenience, never a reason to show an error.
 */
export async function knownDevices(
  session: Session,
  { online = false }: { online?: boolean } = {},
): Promise<readonly string[]> {
  const own = session.who.devices ?? [];
  if (!can(session, fleetScope)) return own;
  try {
    const fleet = await fetchFleet(session.api);
    return online ? onlineDeviceNames(fleet) : fleet.map((d) => d.device_name);
  } catch {
    return own;
  }
}
