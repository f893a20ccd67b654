/**
 * Synthetic input through @nut-tree-fork/nut-js (libnut, XTest underneath), in a child process
 * per desktop. libnut keeps one X connection per process and Xlib ends the process when that
 * connection breaks: a null display is a SIGSEGV, an X server that goes away is exit(1) from
 * Xlib's IO error handler (also at exit, from libnut's atexit close). In a child, that is an
 * 'input process exited' error here, and the next action starts a fresh child.
 *
 * The child loads nut-js only after checkDesktop() passed. Key toggles go one by one over IPC
 * so the release-everything logic below (and tests) can wrap them; if this process dies, the
 * child releases whatever it still holds when the IPC channel closes, then exits.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import type { Key } from '@nut-tree-fork/nut-js';
import {
  assertBeforeDeadline,
  DesktopUnavailableError,
  monotonicNow,
  timeLeft,
  type CallOptions,
} from '../../desktop';

/**
 * A nut-js `Key` name ('LeftShift', 'A', 'Return' ...; keys.ts maps the contract's names to
 * them). Names, not enum values, so that nut-js loads only in the child, once the display was
 * checked: the child turns them into key codes.
 */
export type NutKey = keyof typeof Key;

/** Key toggles by nut-js `Key` name. */
export interface KeyboardDriver {
  pressKey(key: NutKey): Promise<void>;
  releaseKey(key: NutKey): Promise<void>;
}

export interface NutInput {
  /**
   * Starts the child now (the agent calls it at start, so no press waits for nut-js to load);
   * DesktopUnavailableError when it cannot.
   */
  start(): Promise<void>;
  /**
   * Runs `action` with this desktop's keyboard; actions of one desktop never interleave. No key
   * goes down after `deadline` (DeadlinePassedError); releases always go.
   */
  withKeyboard<T>(
    action: (keyboard: KeyboardDriver) => Promise<T>,
    options?: CallOptions,
  ): Promise<T>;
  /** Nothing is clicked after `deadline`. */
  click(x: number, y: number, options?: CallOptions): Promise<void>;
  /**
   * Runs other input of this desktop (text typed through its own X connection) in the same
   * queue, so it never interleaves with keys and clicks; a failure makes the next action
   * release every modifier first, as a failed toggle does.
   */
  exclusive<T>(action: () => Promise<T>): Promise<T>;
  close(): void;
}

// Plain JS run with `node -e`: compiled output and ts-jest alike can start it. It spells no key
// name: it gets the nut-js module path and the modifiers to release (allNutModifiers) as
// arguments.
const WORKER_SOURCE = `
'use strict';
const nut = require(process.argv[1]);
// X keeps a key down after the client that pressed it died: release every modifier first.
const MODIFIERS = JSON.parse(process.argv[2]);
nut.keyboard.config.autoDelayMs = 0;
nut.mouse.config.autoDelayMs = 0;
// nut-js's constructor also set libnut's own delay: a blocking 300 ms sleep per toggle.
nut.providerRegistry.getKeyboard().setKeyboardDelay(0);
nut.providerRegistry.getMouse().setMouseDelay(0);
const held = new Set();
const key = (name) => {
  const code = nut.Key[name];
  if (typeof code !== 'number') throw new Error('nut-js has no key ' + name);
  return code;
};
// Aliases libnut has no X keysym for ('Invalid key code') are skipped; at least one must go.
const releaseModifiers = async () => {
  let released = 0;
  let failure;
  for (const name of MODIFIERS) {
    const code = nut.Key[name];
    if (typeof code !== 'number') continue;
    try { await nut.keyboard.releaseKey(code); released += 1; } catch (e) { failure = e; }
  }
  if (released === 0 && failure) throw failure;
};
process.on('message', async (msg) => {
  let error;
  try {
    if (msg.op === 'down') { const code = key(msg.key); held.add(code); await nut.keyboard.pressKey(code); }
    else if (msg.op === 'up') { const code = key(msg.key); await nut.keyboard.releaseKey(code); held.delete(code); }
    else if (msg.op === 'reset') {
      for (const name of msg.keys || []) { const code = nut.Key[name]; if (typeof code === 'number') await nut.keyboard.releaseKey(code); }
      await releaseModifiers(); held.clear();
    }
    else if (msg.op === 'click') { await nut.mouse.setPosition(new nut.Point(msg.x, msg.y)); await nut.mouse.leftClick(); }
    else throw new Error('unknown op ' + msg.op);
  } catch (e) { error = String((e && e.message) || e); }
  process.send({ id: msg.id, error });
});
process.on('disconnect', async () => {
  for (const code of held) { try { await nut.keyboard.releaseKey(code); } catch (e) {} }
  process.exit(0);
});
releaseModifiers().then(
  () => process.send({ ready: true }),
  (e) => { process.stderr.write('cannot release the modifiers: ' + String((e && e.message) || e)); process.exit(1); },
);
`;

/** Every modifier key nut-js knows on X, left and right: the input child releases them all. */
const allNutModifiers: readonly NutKey[] = [
  'LeftControl',
  'RightControl',
  'LeftShift',
  'RightShift',
  'LeftAlt',
  'RightAlt',
  'LeftSuper',
  'RightSuper',
  'LeftMeta',
  'RightMeta',
  'LeftCmd',
  'RightCmd',
  'LeftWin',
  'RightWin',
];

/** A request the child did not answer in time; the child has been killed. */
class InputTimeoutError extends DesktopUnavailableError {}

interface Reply {
  id?: number;
  error?: string;
  ready?: boolean;
}

/**
 * Holds the modifiers, presses and releases the key, then releases every modifier in reverse
 * order, whatever failed on the way. A key that may have gone down is always released; the
 * first error is rethrown after the releases.
 */
export async function pressWithModifiers(
  keyboard: KeyboardDriver,
  key: NutKey,
  modifiers: readonly NutKey[],
): Promise<void> {
  const held: NutKey[] = [];
  let failure: { error: unknown } | undefined;
  try {
    for (const modifier of modifiers) {
      held.push(modifier);
      await keyboard.pressKey(modifier);
    }
    held.push(key);
    await keyboard.pressKey(key);
  } catch (error) {
    failure = { error };
  }
  for (const name of held.reverse()) {
    try {
      await keyboard.releaseKey(name);
    } catch (error) {
      failure ??= { error };
    }
  }
  if (failure) throw failure.error;
}

export interface NutInputOptions {
  /** How long the child may take to load nut-js and open the display. Default 15000. */
  startTimeoutMs?: number;
  /**
   * How long one key toggle or click may take. A child stuck in X (a hung server) is killed
   * then, the call fails with DesktopUnavailableError and the next one starts a fresh child,
   * so a hung display never hangs the agent. Default 2000.
   */
  requestTimeoutMs?: number;
  /** The nut-js module the child loads (tests substitute a fake). */
  modulePath?: string;
}

/** Input for one X display. Use only after checkDesktop() said the display answers. */
export function nutInput(env: NodeJS.ProcessEnv, options: NutInputOptions = {}): NutInput {
  const startTimeoutMs = options.startTimeoutMs ?? 15_000;
  const requestTimeoutMs = options.requestTimeoutMs ?? 2000;
  let child: ChildProcess | undefined;
  let starting: Promise<ChildProcess> | undefined;
  let nextId = 0;
  const pending = new Map<
    number,
    { proc: ChildProcess; resolve: () => void; reject: (e: Error) => void }
  >();
  let queue: Promise<unknown> = Promise.resolve();
  let closed = false;

  const start = (): Promise<ChildProcess> =>
    new Promise((resolve, reject) => {
      const nutPath = options.modulePath ?? require.resolve('@nut-tree-fork/nut-js');
      const modifiers = JSON.stringify(allNutModifiers);
      const proc = spawn(process.execPath, ['-e', WORKER_SOURCE, nutPath, modifiers], {
        env,
        stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
      });
      let stderr = '';
      proc.stderr?.on('data', (chunk: Buffer) => {
        stderr = (stderr + chunk.toString('utf8')).slice(-2000);
      });
      const timer = setTimeout(() => {
        proc.kill('SIGKILL');
        reject(
          new DesktopUnavailableError(`The input process did not start in ${startTimeoutMs} ms`),
        );
      }, startTimeoutMs);
      proc.on('message', (reply: Reply) => {
        if (reply.ready) {
          clearTimeout(timer);
          resolve(proc);
          return;
        }
        const waiter = reply.id === undefined ? undefined : pending.get(reply.id);
        if (!waiter || waiter.proc !== proc || reply.id === undefined) return;
        pending.delete(reply.id);
        if (reply.error === undefined) waiter.resolve();
        else waiter.reject(new Error(reply.error));
      });
      proc.on('error', (error) => {
        clearTimeout(timer);
        reject(new DesktopUnavailableError('Cannot start the input process', { cause: error }));
      });
      proc.on('exit', (code, signal) => {
        clearTimeout(timer);
        if (child === proc) child = undefined;
        const error = new DesktopUnavailableError(
          `The input process exited (${signal ?? code}): ${stderr.trim() || 'no output'}`,
        );
        reject(error);
        for (const [id, waiter] of pending) {
          if (waiter.proc !== proc) continue; // a fresh child's requests are not affected
          pending.delete(id);
          waiter.reject(error);
        }
        warm();
      });
    });

  /**
   * Set when any request failed: before anything else, the next action (or the restarted child)
   * releases every modifier and each key that went down without a confirmed release.
   */
  let needsReset = false;
  const maybeHeld = new Set<string>();
  let lastWarm = -Infinity;

  const startChild = (): Promise<ChildProcess> => {
    starting ??= start()
      .then((proc) => (child = proc))
      .finally(() => (starting = undefined));
    return starting;
  };

  /**
   * A child died or was killed while the input was open: start the next one now, so the keys it
   * left down are released at once (its start releases every modifier), not at the next press.
   * At most once a second, so a display that kills every child is not a busy loop.
   */
  const warm = (): void => {
    if (closed || child || starting || monotonicNow() - lastWarm < 1000) return;
    lastWarm = monotonicNow();
    startChild().then(
      () => (needsReset ? exclusive(() => Promise.resolve()) : undefined),
      () => undefined, // the next request starts one again and reports why
    );
  };

  /** The running child; waits for one to start, but not beyond the deadline. */
  const ready = async (deadline: number | undefined): Promise<ChildProcess> => {
    if (child) return child;
    const started = startChild();
    const left = timeLeft(deadline);
    if (left === Infinity) return started;
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        try {
          assertBeforeDeadline(deadline, monotonicNow() + 1, 'waiting for the input process');
        } catch (error) {
          reject(error instanceof Error ? error : new Error(String(error)));
        }
      }, left);
    });
    try {
      return await Promise.race([started, late]);
    } finally {
      clearTimeout(timer);
    }
  };

  /**
   * One request to the child. A key going down ('down') or a click is not sent once `deadline`
   * has passed; releases ('up', 'reset') always are.
   */
  const request = async (message: Record<string, unknown>, deadline?: number): Promise<void> => {
    if (closed) throw new DesktopUnavailableError('The desktop connection is closed');
    const proc = await ready(deadline);
    assertBeforeDeadline(deadline, monotonicNow(), `before '${String(message.op)}'`);
    const id = ++nextId;
    return new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        pending.delete(id);
        needsReset = true;
        if (child === proc) child = undefined;
        proc.kill('SIGKILL');
        reject(
          new InputTimeoutError(
            `The input process did not answer '${String(message.op)}' within ${requestTimeoutMs} ms (X server hung?): it was killed, the next action starts a fresh one`,
          ),
        );
      }, requestTimeoutMs);
      pending.set(id, {
        proc,
        resolve: () => {
          clearTimeout(timer);
          resolve();
        },
        reject: (error) => {
          clearTimeout(timer);
          needsReset = true;
          reject(error);
        },
      });
      proc.send({ ...message, id });
    });
  };

  /** Runs actions one at a time; after any failure, the next one first releases every modifier. */
  const exclusive = <T>(action: () => Promise<T>): Promise<T> => {
    const guarded = async (): Promise<T> => {
      if (needsReset) {
        await request({ op: 'reset', keys: [...maybeHeld] });
        needsReset = false;
        maybeHeld.clear();
      }
      return action();
    };
    const run = queue.then(guarded, guarded);
    queue = run.catch(() => undefined);
    return run;
  };

  /**
   * A keyboard for one action. Once a toggle timed out, the action's remaining toggles (the
   * releases) fail at once: starting a child against a hung X server would only wait for the
   * start timeout per key, holding every later command.
   */
  const keyboardFor = (deadline: number | undefined): KeyboardDriver => {
    let hung: Error | undefined;
    const toggle = async (message: Record<string, unknown>, by?: number): Promise<void> => {
      if (hung) throw hung;
      const key = String(message.key);
      try {
        if (message.op === 'down') maybeHeld.add(key);
        await request(message, by);
        if (message.op === 'up') maybeHeld.delete(key);
      } catch (error) {
        if (error instanceof InputTimeoutError) hung = error;
        throw error;
      }
    };
    return {
      pressKey: (key) => toggle({ op: 'down', key }, deadline),
      releaseKey: (key) => toggle({ op: 'up', key }),
    };
  };

  return {
    start: async () => {
      await startChild();
    },
    withKeyboard: (action, callOptions = {}) =>
      exclusive(() => action(keyboardFor(callOptions.deadline))),
    click: (x, y, callOptions = {}) =>
      exclusive(() => request({ op: 'click', x, y }, callOptions.deadline)),
    exclusive: (action) =>
      exclusive(() =>
        action().catch((error: unknown) => {
          needsReset = true;
          throw error;
        }),
      ),
    close: () => {
      closed = true;
      // Disconnecting lets the child release anything held before it exits.
      const proc = child;
      child = undefined;
      if (proc?.connected) proc.disconnect();
      // A child stuck in X (server hung) still goes away.
      if (proc) setTimeout(() => proc.kill('SIGKILL'), 2000).unref();
    },
  };
}
