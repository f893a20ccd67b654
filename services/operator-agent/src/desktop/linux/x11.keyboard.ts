/**
 * Types text as key presses on an X display (XTEST), any Unicode character included: a
 * character the keyboard map has (level 1, or level 2 with Shift) is typed with its key; any
 * other is lent a key of its own, one of the keycodes the map leaves empty (19 on Xvfb's map).
 * Applications see ordinary key events, the same as from a user.
 *
 * Lent keys stay mapped until the application shows the text: it reads the map when it handles
 * a key event, which can be after we sent the next ones; mapping a key again per character (as
 * `xdotool type` does) lost every such character in Chromium here unless 60 ms passed between
 * keys. A text needing more keys than are free is typed in runs, each waiting for the previous
 * one to show (TypeOptions.settled). After that a lent key keeps its character for later
 * typings (each change of the map costs every X client a keymap reload: lending 4 characters
 * and giving them back took about 35 ms of a 20-character typing here), up to half of the keys
 * the map leaves empty (the others stay empty for other programs that lend keys); it is lent
 * again when a character needs it (least recently used first) and given back by giveBack()
 * (the desktop's close). A key no longer showing our character (a layout switch) is not ours.
 */
import { ValidationError } from '@screenfleet/contracts';
import { assertBeforeDeadline, monotonicNow, type CallOptions } from '../desktop';
import type { X11Connection } from './x11.connection';

const KEYSYM = { return: 0xff0d, tab: 0xff09, shiftLeft: 0xffe1 } as const;

/** The X keysym of one character (a code point); ValidationError for control characters. */
export function keysymOf(char: string): number {
  if (char === '\n') return KEYSYM.return;
  if (char === '\t') return KEYSYM.tab;
  const code = char.codePointAt(0) ?? 0;
  if (code < 0x20 || (code >= 0x7f && code < 0xa0)) {
    throw new ValidationError(`text contains the control character U+${hex(code)}`, [
      {
        path: 'text',
        rule: 'typeable',
        detail: `U+${hex(code)} is a control character; only \\n (Enter) and \\t (Tab) are typed`,
      },
    ]);
  }
  // Latin-1 keysyms are the code points themselves; every other character has 0x01000000 + it.
  return code <= 0xff ? code : 0x01000000 + code;
}

const hex = (code: number): string => code.toString(16).toUpperCase().padStart(4, '0');

interface KeyStroke {
  keycode: number;
  shift: boolean;
}

export interface TypeOptions extends CallOptions {
  /**
   * Called after each run of keys with how many characters were typed so far; resolves once the
   * application shows them (it has then read every key, so their keys may be lent again).
   */
  settled(typed: number): Promise<void>;
}

/**
 * Whether a key's levels are one lent character: the server keeps it on the levels of its own
 * two groups (four of Xvfb's seven) and reports the others empty.
 */
export const holds = (levels: readonly number[], keysym: number): boolean =>
  levels[0] === keysym && levels.every((held) => held === keysym || held === 0);

export interface TextTyper {
  /**
   * Types the characters in order. Nothing goes down after the deadline (DeadlinePassedError,
   * the characters before it typed); Shift is always released.
   */
  type(chars: readonly string[], options: TypeOptions): Promise<void>;
  /** Gives every key still lent back its empty mapping. */
  giveBack(): Promise<void>;
}

export function x11Typer(
  connection: X11Connection,
  options: { timeoutMs?: number } = {},
): TextTyper {
  const timeoutMs = options.timeoutMs ?? 2000;
  const { minKeycode } = connection.setup;
  /** Keys lent to a character: keycode -> keysym, least recently used first. */
  const lent = new Map<number, number>();

  /**
   * The keys of the map (level 1 plain, level 2 with Shift) without the ones we lent, the
   * keycodes it leaves empty, and our lent keys that still hold their character.
   */
  const readMap = async () => {
    const map = await connection.keyboardMapping();
    const strokes = new Map<number, KeyStroke>();
    const free: number[] = [];
    map.forEach((levels, i) => {
      const keycode = minKeycode + i;
      const ours = lent.get(keycode);
      if (ours !== undefined && holds(levels, ours)) return;
      lent.delete(keycode);
      if (levels.every((keysym) => keysym === 0)) free.push(keycode);
      levels.slice(0, 2).forEach((keysym, level) => {
        if (keysym !== 0 && !strokes.has(keysym))
          strokes.set(keysym, { keycode, shift: level === 1 });
      });
    });
    const shift = strokes.get(KEYSYM.shiftLeft);
    return {
      strokes,
      free,
      perKeycode: map[0]?.length ?? 2,
      shift: shift?.shift === false ? shift.keycode : undefined,
    };
  };

  /** Runs of characters, each needing no more keys lent than `keys` (empty ones and ours). */
  const runs = (chars: readonly string[], known: ReadonlyMap<number, KeyStroke>, keys: number) => {
    const result: string[][] = [];
    let run: string[] = [];
    let needed = new Set<number>();
    for (const char of chars) {
      const keysym = keysymOf(char);
      if (!known.has(keysym) && !needed.has(keysym)) {
        if (keys === 0) {
          throw new ValidationError(`'${char}' has no key on this desktop's keyboard`, [
            {
              path: 'text',
              rule: 'typeable',
              detail: `U+${hex(char.codePointAt(0) ?? 0)} has no key and the keyboard map has no free key to lend it`,
            },
          ]);
        }
        if (needed.size === keys) {
          result.push(run);
          run = [];
          needed = new Set();
        }
        needed.add(keysym);
      }
      run.push(char);
    }
    if (run.length > 0) result.push(run);
    return result;
  };

  /**
   * The key for each character of the run the map lacks: one already lent to it, else an empty
   * one, else one of ours the run does not use (least recently used first), mapped now. A key
   * lent again is emptied first and the server synced: mapped straight from one character to
   * another, Chromium typed the old one (the 60-character test).
   */
  const lendFor = async (
    run: readonly string[],
    known: ReadonlyMap<number, KeyStroke>,
    free: number[],
    perKeycode: number,
  ) => {
    const keyOf = new Map<number, number>();
    for (const [keycode, keysym] of lent) keyOf.set(keysym, keycode);
    const wanted = [...new Set(run.map(keysymOf).filter((keysym) => !known.has(keysym)))];
    const missing = wanted.filter((keysym) => !keyOf.has(keysym));
    const kept = new Set(wanted.flatMap((keysym) => keyOf.get(keysym) ?? []));
    // runs() cut the text so that the empty keys and ours the run does not use are enough.
    const again = [...lent.keys()]
      .filter((keycode) => !kept.has(keycode))
      .slice(0, Math.max(0, missing.length - free.length));
    for (const keycode of again) {
      connection.changeKeyboardMapping(keycode, [new Array<number>(perKeycode).fill(0)]);
      lent.delete(keycode);
    }
    if (again.length > 0) await connection.sync(timeoutMs);
    free.push(...again);
    const strokes = new Map<number, KeyStroke>();
    for (const keysym of wanted) {
      let keycode = keyOf.get(keysym);
      if (keycode === undefined) {
        keycode = free.pop();
        if (keycode === undefined) throw new Error('no key left to lend in this run');
        // Every level the same character, so a held Shift or Caps Lock changes nothing.
        connection.changeKeyboardMapping(keycode, [new Array<number>(perKeycode).fill(keysym)]);
      }
      lent.delete(keycode); // most recently used last
      lent.set(keycode, keysym);
      strokes.set(keysym, { keycode, shift: false });
    }
    return strokes;
  };

  /**
   * Gives keys back (least recently used first) until `keep` stay lent: up to half of the keys
   * the map leaves empty are kept, the others stay empty for other programs that lend keys
   * (`xdotool type`, a second agent).
   */
  const giveBackAllBut = async (keep: number) => {
    if (lent.size <= keep || connection.closed) return;
    const map = await connection.keyboardMapping();
    for (const [keycode, keysym] of [...lent].slice(0, lent.size - keep)) {
      const levels = map[keycode - minKeycode] ?? [];
      if (holds(levels, keysym))
        connection.changeKeyboardMapping(keycode, [new Array<number>(levels.length).fill(0)]);
      lent.delete(keycode);
    }
    await connection.sync(timeoutMs);
  };

  return {
    async type(chars, typeOptions) {
      const { strokes, free, perKeycode, shift } = await readMap();
      let typed = 0;
      for (const run of runs(chars, strokes, free.length + lent.size)) {
        const lentNow = await lendFor(run, strokes, free, perKeycode);
        let shiftDown = false;
        try {
          for (const char of run) {
            const keysym = keysymOf(char);
            const stroke = (strokes.get(keysym) ?? lentNow.get(keysym)) as KeyStroke;
            if (stroke.shift && shift === undefined) {
              throw new ValidationError(`'${char}' needs Shift, which this keyboard map lacks`, []);
            }
            assertBeforeDeadline(
              typeOptions.deadline,
              monotonicNow(),
              `typing character ${typed + 1}`,
            );
            if (stroke.shift !== shiftDown && shift !== undefined) {
              connection.fakeKey(shift, stroke.shift);
              shiftDown = stroke.shift;
            }
            connection.fakeKey(stroke.keycode, true);
            connection.fakeKey(stroke.keycode, false);
            typed += 1;
          }
        } finally {
          if (shiftDown && shift !== undefined && !connection.closed)
            connection.fakeKey(shift, false);
          if (typed > 0 && !connection.closed)
            await connection.sync(timeoutMs).catch(() => undefined);
        }
        await typeOptions.settled(typed);
      }
      await giveBackAllBut(Math.floor((free.length + lent.size) / 2));
    },

    async giveBack() {
      await giveBackAllBut(0);
    },
  };
}
