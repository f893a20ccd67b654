/**
 * The input child's per-request timeout, with a stand-in for nut-js whose 'B' key blocks its
 * process the way an Xlib call blocks on a hung X server. Needs no display.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readFileSync } from 'node:fs';
import { DesktopUnavailableError } from '@screenfleet/contracts';
import { waitFor } from '@screenfleet/runtime';
import { monotonicNow, nutInput, pressWithModifiers, type NutInput } from '../src/desktop';

/** The fake's log as [pid, op, code] rows. */
function toggles(file: string): Array<[string, string, number]> {
  let text = '';
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return [];
  }
  return text
    .trim()
    .split('\n')
    .filter(Boolean)
    .map((line) => {
      const [pid = '', op = '', code = ''] = line.split(' ');
      return [pid, op, Number(code)];
    });
}

/** Keys whose last toggle in the log is 'down'. */
function heldKeys(file: string): number[] {
  const last = new Map<number, string>();
  for (const [, op, code] of toggles(file)) last.set(code, op);
  return [...last].filter(([, op]) => op === 'down').map(([code]) => code);
}

// Every toggle is appended to FAKE_NUT_LOG as "<pid> down|up <code>"; B (2) blocks, C (4) is slow.
const HUNG_NUT = `
const fs = require('node:fs');
const block = (ms = 60000) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
const log = (op, code) => process.env.FAKE_NUT_LOG && fs.appendFileSync(process.env.FAKE_NUT_LOG, process.pid + ' ' + op + ' ' + code + '\\n');
module.exports = {
  Key: { A: 1, B: 2, LeftShift: 3, C: 4, LeftControl: 5 },
  keyboard: {
    config: {},
    pressKey: async (code) => { log('down', code); if (code === 2) block(); if (code === 4) block(400); },
    releaseKey: async (code) => { log('up', code); },
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

  test('when the input is started, then the child is up before any press and has released every modifier', async () => {
    const logFile = join(dir, 'start.log');
    input = nutInput({ ...process.env, FAKE_NUT_LOG: logFile }, { modulePath });
    await input.start();
    expect(toggles(logFile).map(([, op, code]) => `${op} ${code}`)).toEqual(['up 5', 'up 3']);
  });

  test('when a modifier goes down slowly and the deadline passes meanwhile, then the key never goes down and the modifier is released', async () => {
    const logFile = join(dir, 'slow.log');
    input = nutInput({ ...process.env, FAKE_NUT_LOG: logFile }, { modulePath });
    await input.start();
    const deadline = monotonicNow() + 200;
    await expect(
      input.withKeyboard((keyboard) => pressWithModifiers(keyboard, 'A', ['C']), { deadline }),
    ).rejects.toMatchObject({ code: 'timeout' });
    const ops = toggles(logFile).map(([, op, code]) => `${op} ${code}`);
    expect(ops).toContain('down 4');
    expect(ops).not.toContain('down 1');
    expect(heldKeys(logFile)).toEqual([]);

    // A deadline already past: nothing at all goes down, and no click.
    const before = toggles(logFile).length;
    await expect(
      input.withKeyboard((keyboard) => pressWithModifiers(keyboard, 'A', []), {
        deadline: monotonicNow() - 1,
      }),
    ).rejects.toMatchObject({ code: 'timeout' });
    await expect(input.click(1, 2, { deadline: monotonicNow() - 1 })).rejects.toMatchObject({
      code: 'timeout',
    });
    expect(
      toggles(logFile)
        .slice(before)
        .filter(([, op]) => op === 'down'),
    ).toEqual([]);
  });

  test('when the child is killed after ctrl went down (it hangs on the second key), then a fresh child releases ctrl and the key before anything else', async () => {
    const logFile = join(dir, 'hang.log');
    input = nutInput(
      { ...process.env, FAKE_NUT_LOG: logFile },
      { modulePath, requestTimeoutMs: 300 },
    );
    await input.start();
    await expect(
      input.withKeyboard((keyboard) => pressWithModifiers(keyboard, 'B', ['LeftControl'])),
    ).rejects.toBeInstanceOf(DesktopUnavailableError);
    const [firstPid] = toggles(logFile).find(([, op, code]) => op === 'down' && code === 5) ?? [];
    expect(heldKeys(logFile).sort()).toEqual([2, 5]); // the killed child left both down

    // No further press is needed: the restarted child releases them on its own.
    await waitFor(() => heldKeys(logFile).length === 0, {
      timeoutMs: 5000,
      intervalMs: 20,
      what: () => `keys released (held: ${heldKeys(logFile).join(', ')})`,
    });
    const releasedBy = toggles(logFile).filter(([pid, op]) => op === 'up' && pid !== firstPid);
    expect(releasedBy.map(([, , code]) => code)).toEqual(expect.arrayContaining([5, 2]));

    await expect(
      input.withKeyboard((keyboard) => pressWithModifiers(keyboard, 'A', ['LeftShift'])),
    ).resolves.toBeUndefined();
  });
});
