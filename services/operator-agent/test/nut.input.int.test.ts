/**
 * The input child's per-request timeout, with a stand-in for nut-js whose 'B' key blocks its
 * process the way an Xlib call blocks on a hung X server. Needs no display.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DesktopUnavailableError } from '@screenfleet/contracts';
import { nutInput, pressWithModifiers, type NutInput } from '../src/desktop';

const HUNG_NUT = `
const block = () => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 60000);
module.exports = {
  Key: { A: 1, B: 2, LeftShift: 3 },
  keyboard: {
    config: {},
    pressKey: async (code) => { if (code === 2) block(); },
    releaseKey: async () => undefined,
  },
  mouse: { config: {}, setPosition: async () => undefined, leftClick: async () => block() },
  providerRegistry: {
    getKeyboard: () => ({ setKeyboardDelay: () => undefined }),
    getMouse: () => ({ setMouseDelay: () => undefined }),
  },
  Point: class {},
};
`;

describe('nut-js input child', () => {
  const dir = mkdtempSync(join(tmpdir(), 'hung-nut-'));
  const modulePath = join(dir, 'hung-nut.js');
  writeFileSync(modulePath, HUNG_NUT);
  let input: NutInput | undefined;
  afterEach(() => input?.close());
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  test('when the child hangs on a request, then the call fails with desktop_unavailable in time and the next call starts a fresh child', async () => {
    input = nutInput(process.env, { modulePath, requestTimeoutMs: 300 });
    await input.withKeyboard((keyboard) => keyboard.pressKey('A')); // the child is up

    const started = Date.now();
    const hung = input.withKeyboard((keyboard) => pressWithModifiers(keyboard, 'B', ['LeftShift']));
    await expect(hung).rejects.toBeInstanceOf(DesktopUnavailableError);
    await expect(hung).rejects.toThrow(/did not answer 'down' within 300 ms/);
    // The releases after the hung toggle fail at once instead of waiting for a new child each.
    expect(Date.now() - started).toBeLessThan(2000);

    await expect(
      input.withKeyboard((keyboard) => pressWithModifiers(keyboard, 'A', ['LeftShift'])),
    ).resolves.toBeUndefined();
  });

  test('when a click hangs, then it fails in time and close() does not wait for the child', async () => {
    input = nutInput(process.env, { modulePath, requestTimeoutMs: 300 });
    await expect(input.click(1, 2)).rejects.toBeInstanceOf(DesktopUnavailableError);
    input.close();
    await expect(input.click(1, 2)).rejects.toThrow(/closed/);
  });
});
