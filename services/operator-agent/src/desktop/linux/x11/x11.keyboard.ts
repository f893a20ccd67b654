/**
 * Types text as key presses on an X display (XTEST), any Unicode character included: a
 * character the keyboard map has (level 1, or level 2 with Shift) is typed with its key; any
 * other is lent a key of its own, one of the keycodes the map leaves empty (19 on Xvfb's map),
 * which gets its empty mapping back afterwards. Applications see ordinary key events, the same
 * as from a user. check() reads the keymap first, so that a character the desktop cannot type is
 * refused before anything moves; type() plans the keys on the map as it is when typing.
 *
 * Why lent keys stay mapped until the application shows the text: it reads the map when it
 * handles a key event, which can be after we sent the next ones; mapping a key again per
 * character (as `xdotool type` does) lost every such character in Chromium here unless 60 ms
 * passed between keys. A text needing more keys than are free is typed in runs, each waiting
 * for the previous one to show (TypeOptions.settled).
 */
import { ValidationError } from '@screenfleet/contracts';
import { assertBeforeDeadline, monotonicNow, type CallOptions } from '../../desktop';
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

export interface TextTyper {
  /**
   * Reads the keymap and checks the characters against it: a ValidationError, before anything
   * is sent, for a character that cannot be typed on this desktop.
   */
  check(chars: readonly string[]): Promise<void>;
  /**
   * Types the characters in order, their keys planned on the keymap as it is now. Nothing goes
   * down after the deadline (DeadlinePassedError, the characters before it typed); Shift is
   * always released, and lent keys are given back.
   */
  type(chars: readonly string[], options: TypeOptions): Promise<void>;
}

export function x11Typer(
  connection: X11Connection,
  options: { timeoutMs?: number } = {},
): TextTyper {
  const timeoutMs = options.timeoutMs ?? 2000;
  const { minKeycode } = connection.setup;

  /** The keys of the map (level 1 plain, level 2 with Shift) and the keycodes it leaves empty. */
  const readMap = async () => {
    const map = await connection.keyboardMapping();
    const strokes = new Map<number, KeyStroke>();
    const free: number[] = [];
    map.forEach((levels, i) => {
      const keycode = minKeycode + i;
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
  type KeyMap = Awaited<ReturnType<typeof readMap>>;

  /**
   * Runs of characters, each needing no more keys lent than the map leaves free; throws for a
   * character with no key and none to lend, or one that needs a Shift the map lacks.
   */
  const runs = (chars: readonly string[], map: KeyMap) => {
    const result: string[][] = [];
    let run: string[] = [];
    let lent = new Set<number>();
    for (const char of chars) {
      const keysym = keysymOf(char);
      const stroke = map.strokes.get(keysym);
      if (stroke?.shift && map.shift === undefined) {
        throw new ValidationError(`'${char}' needs Shift, which this keyboard map lacks`, []);
      }
      if (!stroke && !lent.has(keysym)) {
        if (map.free.length === 0) {
          throw new ValidationError(`'${char}' has no key on this desktop's keyboard`, [
            {
              path: 'text',
              rule: 'typeable',
              detail: `U+${hex(char.codePointAt(0) ?? 0)} has no key and the keyboard map has no free key to lend it`,
            },
          ]);
        }
        if (lent.size === map.free.length) {
          result.push(run);
          run = [];
          lent = new Set();
        }
        lent.add(keysym);
      }
      run.push(char);
    }
    if (run.length > 0) result.push(run);
    return result;
  };

  /** Types one run, its characters lent keys first; returns how many are typed in all. */
  const typeRun = async (
    map: KeyMap,
    run: readonly string[],
    typedBefore: number,
    typeOptions: TypeOptions,
  ): Promise<number> => {
    const { strokes, free, perKeycode, shift } = map;
    let typed = typedBefore;
    const lent = new Map<number, KeyStroke>();
    try {
      for (const char of run) {
        const keysym = keysymOf(char);
        if (strokes.has(keysym) || lent.has(keysym)) continue;
        const keycode = free[free.length - 1 - lent.size] as number;
        // Every level the same character, so a held Shift or Caps Lock changes nothing.
        connection.changeKeyboardMapping(keycode, [new Array<number>(perKeycode).fill(keysym)]);
        lent.set(keysym, { keycode, shift: false });
      }
      // The focused application reads the new map after it has read the change: typed at
      // once, a run's first key was now and then looked up in the old map (the 60-character
      // test: its 21st character typed as the 1st, whose key it got, 1 run in 3). Its answer
      // to a ping comes after it asked for the new map.
      if (lent.size > 0) await connection.pingFocusedClient(timeoutMs).catch(() => false);
      let shiftDown = false;
      try {
        // Written in one go (the connection sends a tick's requests in one write).
        for (const char of run) {
          const stroke = (strokes.get(keysymOf(char)) ?? lent.get(keysymOf(char))) as KeyStroke;
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
        if (typed > typedBefore && !connection.closed)
          await connection.sync(timeoutMs).catch(() => undefined);
      }
      await typeOptions.settled(typed);
      return typed;
    } finally {
      if (lent.size > 0 && !connection.closed) {
        for (const { keycode } of lent.values()) {
          connection.changeKeyboardMapping(keycode, [new Array<number>(perKeycode).fill(0)]);
        }
        // Not waited for: the server does a connection's requests in order, so the next map
        // read (the next typing's) already sees the keys given back.
        void connection.sync(timeoutMs).catch(() => undefined);
      }
    }
  };

  return {
    async check(chars) {
      runs(chars, await readMap());
    },
    async type(chars, typeOptions) {
      // The map read again (the caller holds the input): since a check, the focus took its
      // round trips, and the map may have changed meanwhile (a layout switch, another typing's
      // lent keys); a key planned on the old map would type another character, or none.
      const map = await readMap();
      let typed = 0;
      for (const run of runs(chars, map)) typed = await typeRun(map, run, typed, typeOptions);
    },
  };
}
