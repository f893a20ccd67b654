import { createLogger } from '@screenfleet/runtime';
import { DesktopUnavailableError } from './desktop';
import { openDesktop } from './open-desktop';

describe('openDesktop', () => {
  it('when no display is set, then the agent gets a desktop that refuses with the reason, not a start failure', async () => {
    const logger = createLogger({ service: 'test', level: 'silent' });
    const opened = await openDesktop(
      { display: undefined, dbusSessionBusAddress: undefined, xauthority: undefined },
      logger,
    );
    expect(opened.problem).toContain('DISPLAY is not set');
    await expect(opened.desktop.listElements({ appName: 'gedit' })).rejects.toThrow(
      DesktopUnavailableError,
    );
  });
});
