/**
 * Pre-flight check for the Linux desktop: a reachable X display and an answering accessibility
 * bus. nut-js kills the process when the display does not answer, so nothing may load it
 * before this says ok.
 */
import { spawn } from 'node:child_process';
import { connect } from 'node:net';
import type { DesktopCheck } from '../desktop';
import { AtspiClient } from './atspi/atspi.client';
import { A11Y_BUS } from './atspi/atspi.constants';
import { openDBusConnection } from './dbus/dbus.connection';

/** The variables the Linux desktop needs; XAUTHORITY and friends are passed along as given. */
export interface LinuxDesktopEnv {
  DISPLAY?: string;
  DBUS_SESSION_BUS_ADDRESS?: string;
  [name: string]: string | undefined;
}

export interface CheckOptions {
  timeoutMs?: number;
}

type Probe = 'answers' | 'refused' | 'no-xdpyinfo';

/** Runs `xdpyinfo` against the display: the same connection and auth that libnut will use. */
function probeWithXdpyinfo(env: LinuxDesktopEnv, timeoutMs: number): Promise<Probe> {
  return new Promise((resolve) => {
    const child = spawn('xdpyinfo', ['-display', env.DISPLAY ?? ''], {
      env,
      stdio: 'ignore',
      timeout: timeoutMs,
    });
    child.once('error', (error: NodeJS.ErrnoException) =>
      resolve(error.code === 'ENOENT' ? 'no-xdpyinfo' : 'refused'),
    );
    child.once('exit', (code) => resolve(code === 0 ? 'answers' : 'refused'));
  });
}

/** Without xdpyinfo: can we at least connect to a local display's socket? */
function probeSocket(display: string, timeoutMs: number): Promise<Probe> {
  const match = /^(?:unix)?:(\d+)(?:\.\d+)?$/.exec(display);
  if (!match) return Promise.resolve('refused');
  return new Promise((resolve) => {
    const socket = connect(`/tmp/.X11-unix/X${match[1]}`);
    const done = (result: Probe): void => {
      socket.destroy();
      resolve(result);
    };
    socket.setTimeout(timeoutMs, () => done('refused'));
    socket.once('connect', () => done('answers'));
    socket.once('error', () => done('refused'));
  });
}

async function a11yBusOwned(address: string, timeoutMs: number): Promise<boolean> {
  const bus = await openDBusConnection(address, { hello: true, timeoutMs });
  try {
    const [owned] = await bus.call(
      {
        destination: 'org.freedesktop.DBus',
        path: '/org/freedesktop/DBus',
        interface: 'org.freedesktop.DBus',
        member: 'NameHasOwner',
        signature: 's',
        body: [A11Y_BUS.name],
      },
      timeoutMs,
    );
    return owned === true;
  } finally {
    bus.close();
  }
}

function message(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

export async function checkDesktop(
  env: LinuxDesktopEnv,
  options: CheckOptions = {},
): Promise<DesktopCheck> {
  const timeoutMs = options.timeoutMs ?? 3000;
  const display = env.DISPLAY;
  if (!display) return { ok: false, reason: 'DISPLAY is not set: no X display to send keys to' };
  let probe = await probeWithXdpyinfo(env, timeoutMs);
  if (probe === 'no-xdpyinfo') probe = await probeSocket(display, timeoutMs);
  if (probe !== 'answers') {
    return { ok: false, reason: `The X display ${display} does not answer` };
  }

  const busAddress = env.DBUS_SESSION_BUS_ADDRESS;
  if (!busAddress) {
    return { ok: false, reason: 'DBUS_SESSION_BUS_ADDRESS is not set: no session bus' };
  }
  try {
    // Asking GetAddress of a name nobody owns would activate a second bus launcher.
    if (!(await a11yBusOwned(busAddress, timeoutMs))) {
      return {
        ok: false,
        reason: `The accessibility bus (${A11Y_BUS.name}) is not running on the session bus; start at-spi-bus-launcher`,
      };
    }
  } catch (error) {
    return {
      ok: false,
      reason: `The session bus ${busAddress} does not answer: ${message(error)}`,
    };
  }
  try {
    const client = await AtspiClient.connect(busAddress, timeoutMs);
    try {
      await client.applications();
    } finally {
      client.close();
    }
  } catch (error) {
    return { ok: false, reason: `The accessibility bus does not answer: ${message(error)}` };
  }
  return { ok: true };
}
