import type { Logger, SettingsConfig } from '@screenfleet/runtime';
import type { agentConfigSpec } from './config';
import { createLinuxDesktop, DesktopUnavailableError, type Desktop } from './desktop';
import { unavailableDesktop } from './domain/unavailable-desktop';

export interface OpenedDesktop {
  desktop: Desktop;
  /** Why the desktop cannot be driven; undefined when it can. */
  problem: string | undefined;
}

/**
 * The desktop the config names, or, when it cannot be driven (no display, no accessibility
 * bus), one that answers every command with 503 and why: an unusable desktop is not a start
 * failure, in either mode. Any other error is.
 */
export async function openDesktop(
  config: Pick<
    SettingsConfig<typeof agentConfigSpec>,
    'display' | 'dbusSessionBusAddress' | 'xauthority'
  >,
  logger: Logger,
): Promise<OpenedDesktop> {
  try {
    const desktop = await createLinuxDesktop({
      env: {
        DISPLAY: config.display,
        DBUS_SESSION_BUS_ADDRESS: config.dbusSessionBusAddress,
        XAUTHORITY: config.xauthority,
      },
    });
    return { desktop, problem: undefined };
  } catch (error) {
    if (!(error instanceof DesktopUnavailableError)) throw error;
    logger.error({ reason: error.message }, 'desktop unavailable: every command will get 503');
    return { desktop: unavailableDesktop(error.message), problem: error.message };
  }
}
