/**
 * A modifier must not stay held on a real X server: the real nut-js presses LeftControl, then
 * hangs on the second key (a wrapper blocks it the way a hung X call would); the input child is
 * killed. X keeps a killed client's keys down, so the fresh child must release them. The X key
 * state is read back with QueryKeymap. Needs Xvfb and xdpyinfo (no Chromium, no D-Bus).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DesktopUnavailableError } from '@screenfleet/contracts';
import { nutInput, pressWithModifiers, type NutInput } from '../src/desktop';
import { freeDisplayNumber } from './support/desktop-harness';
import {
  startProcess,
  stopProcess,
  succeeds,
  waitUntil,
  type StartedProcess,
} from './support/processes';
import { keysDown } from './support/x-keymap';

/**
 * nut-js that hangs on B. A child loading it after the first one (the fresh child) waits
 * RESTART_DELAY_MS first, so the test reads the keys the killed child left down before the
 * fresh one releases them, however fast this machine starts a child.
 */
const RESTART_DELAY_MS = 3000;
const HANG_ON_B = (realPath: string, startedMarker: string) => `
const fs = require('node:fs');
if (fs.existsSync(${JSON.stringify(startedMarker)})) {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ${RESTART_DELAY_MS});
} else {
  fs.writeFileSync(${JSON.stringify(startedMarker)}, '');
}
const nut = require(${JSON.stringify(realPath)});
const pressKey = nut.keyboard.pressKey.bind(nut.keyboard);
nut.keyboard.pressKey = async (...codes) => {
  if (codes[0] === nut.Key.B) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 60000);
  return pressKey(...codes);
};
module.exports = nut;
`;

describe('no modifier left held on a real X server', () => {
  const dir = mkdtempSync(join(tmpdir(), 'held-mod-'));
  const modulePath = join(dir, 'hang-on-b.js');
  writeFileSync(
    modulePath,
    HANG_ON_B(require.resolve('@nut-tree-fork/nut-js'), join(dir, 'first-child-started')),
  );
  const displayNumber = freeDisplayNumber(150);
  const env = { ...process.env, DISPLAY: `:${displayNumber}` };
  let xvfb: StartedProcess | undefined;
  let input: NutInput | undefined;

  beforeAll(async () => {
    xvfb = startProcess(
      'Xvfb',
      'Xvfb',
      // -noreset: as on a real desktop, the server does not reset (releasing every key) when
      // its last client goes, which the killed child may be.
      [`:${displayNumber}`, '-screen', '0', '640x480x24', '-nolisten', 'tcp', '-noreset'],
      { env },
    );
    await waitUntil(
      `Xvfb :${displayNumber}`,
      () => (succeeds('xdpyinfo', [], env) ? true : undefined),
      10_000,
    );
  });

  afterAll(async () => {
    input?.close();
    if (xvfb) await stopProcess(xvfb);
    rmSync(dir, { recursive: true, force: true });
  });

  test('when the input child is killed after ctrl went down, then X shows no key held afterwards and the next press works', async () => {
    // The default request timeout (2 s): a loaded machine can take over 500 ms for a toggle.
    input = nutInput(env, { modulePath });
    await input.start();
    expect(await keysDown(displayNumber)).toEqual([]);

    await expect(
      input.withKeyboard((keyboard) => pressWithModifiers(keyboard, 'B', ['LeftControl'])),
    ).rejects.toBeInstanceOf(DesktopUnavailableError);
    const heldRightAfter = await keysDown(displayNumber);

    // The restarted child releases what the killed one left down, without a further press.
    const released = await waitUntil(
      'no key held',
      async () => ((await keysDown(displayNumber)).length === 0 ? true : undefined),
      RESTART_DELAY_MS + 15_000, // the fresh child's delay, then its start (nut-js loads)
    );
    expect(released).toBe(true);
    // Ctrl (and possibly B) really was stuck before the fresh child released it.
    expect(heldRightAfter.length).toBeGreaterThan(0);

    await input.withKeyboard((keyboard) => pressWithModifiers(keyboard, 'A', ['LeftShift']));
    expect(await keysDown(displayNumber)).toEqual([]);
  });
});
