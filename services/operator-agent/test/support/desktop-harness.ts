/**
 * A real Linux desktop for tests: Xvfb, a private D-Bus session, the AT-SPI bus and Chromium
 * showing a page that reports every keydown back to the test. The recipe is
 * /work/shared/notes/linux-desktop-testing.md; several harnesses on different display numbers
 * run side by side (each has its own X server, session bus, runtime dir and profile).
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { promisify } from 'node:util';
import { startProcess, stopProcess, succeeds, waitUntil, type StartedProcess } from './processes';
import {
  startTestPage,
  type KeydownReport,
  type PageElement,
  type PageOptions,
  type TestPageServer,
} from './test-page';

const run = promisify(execFile);

export const CHROMIUM = '/usr/lib/chromium/chromium';
export const AT_SPI_BUS_LAUNCHER = '/usr/libexec/at-spi-bus-launcher';
const TOOLS = ['Xvfb', 'xdpyinfo', 'dbus-daemon', 'dbus-send'];
const APT_HINT =
  'apt-get install -y --no-install-recommends xvfb x11-utils xdotool libxtst6 at-spi2-core dbus-x11 chromium';

export type DesktopEnv = {
  DISPLAY: string;
  DBUS_SESSION_BUS_ADDRESS: string;
};

export interface DesktopHarness {
  readonly displayNumber: number;
  /** The variables a desktop client (the agent) needs to reach this desktop. */
  readonly env: DesktopEnv;
  /** The full environment the harness gave its children (for spawning more of them). */
  readonly childEnv: NodeJS.ProcessEnv;
  readonly pageUrl: string;
  /** The served page's keyboard-reachable elements in document order. */
  readonly pageElements: readonly PageElement[];
  waitForKeydown(
    predicate: (report: KeydownReport) => boolean,
    timeoutMs?: number,
  ): Promise<KeydownReport>;
  keydowns(): readonly KeydownReport[];
  /** Ids of the elements the page saw clicked, in order. */
  clicks(): readonly string[];
  /** An input's value as the page's own input event last reported it. */
  valueOf(id: string): string | undefined;
  coverElement(id: string): Promise<void>;
  uncoverElement(id: string): Promise<void>;
  limitLength(id: string, length: number): Promise<void>;
  clearKeydowns(): void;
  removeElement(id: string): Promise<void>;
  restoreElement(id: string): Promise<void>;
  replaceElement(id: string): Promise<void>;
  /** Keeps the page's thread busy for `ms` from the acknowledgement on. */
  busy(ms: number): Promise<void>;
  renameElement(id: string, label: string): Promise<void>;
  stop(): Promise<void>;
}

function which(command: string): boolean {
  return ['/usr/bin', '/bin', '/usr/local/bin', '/usr/sbin'].some((dir) =>
    existsSync(join(dir, command)),
  );
}

/** Throws one clear error naming every missing tool: a desktop test must never skip silently. */
export function assertDesktopToolsInstalled(): void {
  const missing = TOOLS.filter((tool) => !which(tool));
  if (!existsSync(AT_SPI_BUS_LAUNCHER)) missing.push(AT_SPI_BUS_LAUNCHER);
  if (!existsSync(CHROMIUM)) missing.push(CHROMIUM);
  if (missing.length > 0) {
    throw new Error(
      `Desktop test tooling is missing: ${missing.join(', ')}. Install it as root: ${APT_HINT}`,
    );
  }
}

async function readFirstLine(started: StartedProcess, timeoutMs: number): Promise<string> {
  const stdout = started.child.stdout;
  if (!stdout) throw new Error(`${started.name} has no stdout`);
  const lines = createInterface({ input: stdout });
  try {
    return await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`${started.name} printed nothing in ${timeoutMs} ms`)),
        timeoutMs,
      );
      lines.once('line', (line) => {
        clearTimeout(timer);
        resolve(line.trim());
      });
      started.child.once('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`${started.name} exited with ${code}: ${started.output()}`));
      });
    });
  } finally {
    lines.close();
  }
}

async function dbusSend(env: NodeJS.ProcessEnv, args: string[]): Promise<string> {
  const { stdout } = await run('dbus-send', ['--session', '--print-reply', ...args], {
    env,
    timeout: 5000,
  });
  return stdout;
}

function assertRunning(started: StartedProcess): void {
  if (started.child.exitCode !== null || started.child.signalCode !== null) {
    throw new Error(
      `${started.name} exited (${started.child.exitCode ?? started.child.signalCode}): ${started.output()}`,
    );
  }
}

/**
 * The first display number from `from` on with no X server lock or socket, skipping `exclude`
 * (numbers another harness of this run is about to take).
 */
export function freeDisplayNumber(from = 90, exclude: readonly number[] = []): number {
  for (let n = from; n < from + 200; n++) {
    if (exclude.includes(n)) continue;
    if (existsSync(`/tmp/.X${n}-lock`) || existsSync(`/tmp/.X11-unix/X${n}`)) continue;
    return n;
  }
  throw new Error(`No free X display number from :${from}`);
}

/**
 * Starts a desktop on display :displayNumber showing the test page (`page`: the form alone, or
 * with LARGE_PAGE's catalogue). Refuses a display that already answers, so two test runs never
 * share (or kill) each other's X server.
 */
export async function startDesktopHarness(
  displayNumber: number,
  page: PageOptions = {},
): Promise<DesktopHarness> {
  assertDesktopToolsInstalled();
  const display = `:${displayNumber}`;
  const baseEnv = { ...process.env, DISPLAY: display };
  if (succeeds('xdpyinfo', ['-display', display], baseEnv)) {
    throw new Error(`Display ${display} is already in use; pick another display number`);
  }

  const tempDir = mkdtempSync(join(tmpdir(), `desktop-${displayNumber}-`));
  const started: StartedProcess[] = [];
  let server: TestPageServer | undefined;
  const stop = async (): Promise<void> => {
    // Reverse order of start: the browser first, the X server last.
    for (const proc of [...started].reverse()) await stopProcess(proc);
    started.length = 0;
    await server?.close();
    server = undefined;
    rmSync(tempDir, { recursive: true, force: true });
  };

  try {
    const xvfb = startProcess(
      'Xvfb',
      'Xvfb',
      [display, '-screen', '0', '1280x800x24', '-nolisten', 'tcp'],
      { env: baseEnv },
    );
    started.push(xvfb);
    await waitUntil(
      `Xvfb on ${display}`,
      () => {
        assertRunning(xvfb);
        return succeeds('xdpyinfo', ['-display', display], baseEnv) ? true : undefined;
      },
      10_000,
    );

    const runtimeDir = join(tempDir, 'runtime');
    mkdirSync(runtimeDir, { mode: 0o700 });
    const busSocket = join(tempDir, 'session-bus');
    const dbus = startProcess(
      'dbus-daemon',
      'dbus-daemon',
      ['--session', '--nofork', '--print-address=1', `--address=unix:path=${busSocket}`],
      { env: { ...baseEnv, XDG_RUNTIME_DIR: runtimeDir } },
    );
    started.push(dbus);
    const busAddress = await readFirstLine(dbus, 5000);

    const childEnv: NodeJS.ProcessEnv = {
      ...process.env,
      DISPLAY: display,
      DBUS_SESSION_BUS_ADDRESS: busAddress,
      ACCESSIBILITY_ENABLED: '1',
      XDG_RUNTIME_DIR: runtimeDir,
      XDG_CONFIG_HOME: join(tempDir, 'config'),
      XDG_CACHE_HOME: join(tempDir, 'cache'),
      HOME: join(tempDir, 'home'),
    };
    mkdirSync(join(tempDir, 'home'));

    const launcher = startProcess(
      'at-spi-bus-launcher',
      AT_SPI_BUS_LAUNCHER,
      ['--launch-immediately'],
      {
        env: childEnv,
      },
    );
    started.push(launcher);
    // Calling GetAddress before the launcher owns the name would start a second launcher.
    await waitUntil(
      'the AT-SPI bus launcher to own org.a11y.Bus',
      async () => {
        assertRunning(launcher);
        const reply = await dbusSend(childEnv, [
          '--dest=org.freedesktop.DBus',
          '/org/freedesktop/DBus',
          'org.freedesktop.DBus.NameHasOwner',
          'string:org.a11y.Bus',
        ]);
        return reply.includes('boolean true') ? true : undefined;
      },
      10_000,
    );
    await dbusSend(childEnv, [
      '--dest=org.a11y.Bus',
      '/org/a11y/bus',
      'org.freedesktop.DBus.Properties.Set',
      'string:org.a11y.Status',
      'string:IsEnabled',
      'variant:boolean:true',
    ]);

    server = await startTestPage(page);
    const chromium = startProcess(
      'chromium',
      CHROMIUM,
      [
        '--force-renderer-accessibility',
        '--no-sandbox',
        '--disable-gpu',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
        '--disable-quic',
        '--no-default-browser-check',
        '--disable-extensions',
        '--test-type',
        // The whole screen: AT-SPI lists only what is showing, and the large page needs it all.
        '--window-position=0,0',
        '--window-size=1280,800',
        `--user-data-dir=${join(tempDir, 'chromium-profile')}`,
        `--app=${server.url}`,
      ],
      { env: childEnv },
    );
    started.push(chromium);
    await server.waitForReady(30_000).catch((error: Error) => {
      throw new Error(`${error.message}; chromium said: ${chromium.output()}`);
    });

    const readyPage = server;
    return {
      displayNumber,
      env: { DISPLAY: display, DBUS_SESSION_BUS_ADDRESS: busAddress },
      childEnv,
      pageUrl: readyPage.url,
      pageElements: readyPage.elements,
      waitForKeydown: (predicate, timeoutMs = 5000) =>
        readyPage.waitForKeydown(predicate, timeoutMs),
      keydowns: () => readyPage.keydowns(),
      clicks: () => readyPage.clicks(),
      valueOf: (id) => readyPage.valueOf(id),
      coverElement: (id) => readyPage.coverElement(id),
      uncoverElement: (id) => readyPage.uncoverElement(id),
      limitLength: (id, length) => readyPage.limitLength(id, length),
      clearKeydowns: () => readyPage.clearKeydowns(),
      removeElement: (id) => readyPage.removeElement(id),
      restoreElement: (id) => readyPage.restoreElement(id),
      replaceElement: (id) => readyPage.replaceElement(id),
      busy: (ms) => readyPage.busy(ms),
      renameElement: (id, label) => readyPage.renameElement(id, label),
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}
