/**
 * A minimal X11 protocol client over the display's socket, in this process: no Xlib, so a display
 * that goes away is a socket error here, never an exit (Xlib's fate, hence nut-js in a child,
 * docs/adr/0004). It speaks the few requests typing text needs: the keyboard mapping (read and
 * change) and XTEST's fake key events, plus a round trip that says every earlier request was
 * done. Requests with no reply are checked by that round trip: an error the server sent for
 * any of them fails it.
 */
import { existsSync, readFileSync } from 'node:fs';
import { hostname, homedir } from 'node:os';
import { join } from 'node:path';
import { connect, type Socket } from 'node:net';

export class X11Error extends Error {}

/** What the server says about itself at connection time, as far as we need it. */
export interface X11Setup {
  minKeycode: number;
  maxKeycode: number;
  root: number;
  screenWidth: number;
  screenHeight: number;
}

export interface X11Connection {
  readonly setup: X11Setup;
  /** keysyms[keycode - minKeycode] = that key's keysyms by level (0 = none). */
  keyboardMapping(): Promise<number[][]>;
  /** Sets the keysyms of consecutive keycodes from `first` (each list as long as the others). */
  changeKeyboardMapping(first: number, keysyms: readonly number[][]): void;
  /** An XTEST key event: down or up. Sent at once; sync() says whether it was taken. */
  fakeKey(keycode: number, down: boolean): void;
  /** Resolves once the server did every request sent before; rejects on any error they got. */
  sync(timeoutMs: number): Promise<void>;
  /**
   * Asks the client that owns the X keyboard focus to answer a _NET_WM_PING (EWMH), which it
   * does once it has read every event sent to it before: the keys we pressed have left the X
   * server's queue and are in the application's own hands, in order before anything it is
   * asked later. False when no window on the focus chain takes pings (nothing to wait for).
   */
  pingFocusedClient(timeoutMs: number): Promise<boolean>;
  readonly closed: boolean;
  close(): void;
}

const pad4 = (n: number): number => (4 - (n % 4)) % 4;

/** ":1", "unix:1.0", "host:0" -> where to connect. */
function parseDisplay(
  display: string,
): { paths: string[]; number: string } | { host: string; port: number; number: string } {
  const match = /^([^:]*):(\d+)(?:\.\d+)?$/.exec(display.trim());
  if (!match) throw new X11Error(`DISPLAY '${display}' is not of the form [host]:number[.screen]`);
  const [, host = '', number = '0'] = match;
  if (host === '' || host === 'unix') {
    const path = `/tmp/.X11-unix/X${number}`;
    // Linux's abstract namespace (what Xlib tries first), then the file.
    return { paths: [`\0${path}`, path], number };
  }
  return { host, port: 6000 + Number(number), number };
}

/** The MIT-MAGIC-COOKIE-1 for this display from the Xauthority file, if it has one. */
export function readCookie(file: string | undefined, displayNumber: string): Buffer | undefined {
  if (!file || !existsSync(file)) return undefined;
  const data = readFileSync(file);
  const local = hostname();
  let offset = 0;
  const field = (): Buffer => {
    const length = data.readUInt16BE(offset);
    const value = data.subarray(offset + 2, offset + 2 + length);
    offset += 2 + length;
    return value;
  };
  try {
    while (offset < data.length) {
      const family = data.readUInt16BE(offset);
      offset += 2;
      const address = field().toString('latin1');
      const number = field().toString('latin1');
      const name = field().toString('latin1');
      const cookie = field();
      const hostMatches = family === 0xffff || (family === 256 && address === local);
      if (
        hostMatches &&
        (number === '' || number === displayNumber) &&
        name === 'MIT-MAGIC-COOKIE-1'
      ) {
        return cookie;
      }
    }
  } catch {
    return undefined; // a truncated file: try without
  }
  return undefined;
}

async function openSocket(target: ReturnType<typeof parseDisplay>): Promise<Socket> {
  const attempts: Array<() => Socket> =
    'paths' in target
      ? target.paths.map((path) => () => connect(path))
      : [() => connect(target.port, target.host)];
  let lastError: unknown;
  for (const attempt of attempts) {
    const socket = attempt();
    try {
      await new Promise<void>((resolve, reject) => {
        socket.once('connect', resolve);
        socket.once('error', reject);
      });
      return socket;
    } catch (error) {
      socket.destroy();
      lastError = error;
    }
  }
  throw new X11Error(`cannot connect to the X display: ${String(lastError)}`);
}

interface Waiting {
  sequence: number;
  resolve(reply: Buffer): void;
  reject(error: Error): void;
}

/**
 * Connects to `env.DISPLAY` (with the Xauthority cookie of XAUTHORITY or ~/.Xauthority when there
 * is one) and looks up XTEST. Rejects within `timeoutMs` when the server does not answer.
 */
export async function openX11Connection(
  env: { DISPLAY?: string | undefined; XAUTHORITY?: string | undefined; HOME?: string | undefined },
  timeoutMs: number,
): Promise<X11Connection> {
  if (!env.DISPLAY) throw new X11Error('DISPLAY is not set');
  const target = parseDisplay(env.DISPLAY);
  const cookie = readCookie(
    env.XAUTHORITY ?? join(env.HOME ?? homedir(), '.Xauthority'),
    target.number,
  );
  const socket = await openSocket(target);
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      handshake(socket, cookie, timeoutMs),
      new Promise<never>((_, reject) => {
        timer = setTimeout(
          () => reject(new X11Error(`the X display did not answer within ${timeoutMs} ms`)),
          timeoutMs,
        );
      }),
    ]);
  } catch (error) {
    socket.destroy();
    throw error;
  } finally {
    clearTimeout(timer);
  }
}

async function handshake(
  socket: Socket,
  cookie: Buffer | undefined,
  timeoutMs: number,
): Promise<X11Connection> {
  let buffered: Buffer = Buffer.alloc(0);
  let onBytes: (() => void) | undefined;
  socket.on('data', (chunk: Buffer) => {
    buffered = buffered.length === 0 ? chunk : Buffer.concat([buffered, chunk]);
    onBytes?.();
  });
  const take = (bytes: number): Promise<Buffer> =>
    new Promise((resolve, reject) => {
      const check = () => {
        if (buffered.length < bytes) return;
        onBytes = undefined;
        const chunk = buffered.subarray(0, bytes);
        buffered = buffered.subarray(bytes);
        resolve(chunk);
      };
      onBytes = check;
      socket.once('close', () => reject(new X11Error('the X display closed the connection')));
      check();
    });

  const name = cookie ? Buffer.from('MIT-MAGIC-COOKIE-1', 'latin1') : Buffer.alloc(0);
  const data = cookie ?? Buffer.alloc(0);
  const request = Buffer.alloc(
    12 + name.length + pad4(name.length) + data.length + pad4(data.length),
  );
  request.write('l', 0, 'latin1'); // little-endian
  request.writeUInt16LE(11, 2);
  request.writeUInt16LE(name.length, 6);
  request.writeUInt16LE(data.length, 8);
  name.copy(request, 12);
  data.copy(request, 12 + name.length + pad4(name.length));
  socket.write(request);

  const head = await take(8);
  const extra = await take(head.readUInt16LE(6) * 4);
  if (head[0] !== 1) {
    const reason = extra.subarray(0, head[1] ?? 0).toString('latin1');
    throw new X11Error(`the X display refused the connection: ${reason || 'no reason given'}`);
  }
  const vendorLength = extra.readUInt16LE(16);
  const formats = extra[21] ?? 0;
  const screen = 32 + vendorLength + pad4(vendorLength) + formats * 8;
  const setup: X11Setup = {
    minKeycode: extra[26] ?? 8,
    maxKeycode: extra[27] ?? 255,
    root: extra.readUInt32LE(screen),
    screenWidth: extra.readUInt16LE(screen + 20),
    screenHeight: extra.readUInt16LE(screen + 22),
  };
  const connection = new Connection(socket, setup, buffered);
  onBytes = undefined;
  socket.removeAllListeners('data');
  socket.on('data', (chunk: Buffer) => connection.receive(chunk));
  connection.receive(Buffer.alloc(0));
  await connection.findXtest(timeoutMs);
  return connection;
}

class Connection implements X11Connection {
  private sequence = 0;
  private readonly waiting: Waiting[] = [];
  /** The first error the server sent for a request without reply, until the next sync. */
  private error: X11Error | undefined;
  private xtest = 0;
  private lost: Error | undefined;
  private readonly atoms = new Map<string, number>();
  /** Pings under way by their token (the timestamp field), resolved by the client's answer. */
  private readonly pings = new Map<number, () => void>();
  private nextPing = 1;
  private watchingRoot = false;
  private corked = false;

  constructor(
    private readonly socket: Socket,
    readonly setup: X11Setup,
    private buffered: Buffer,
  ) {
    socket.on('error', (error) => this.end(error));
    socket.on('close', () => this.end(new X11Error('the X display closed the connection')));
  }

  get closed(): boolean {
    return this.lost !== undefined;
  }

  receive(chunk: Buffer): void {
    if (chunk.length > 0) {
      this.buffered = this.buffered.length === 0 ? chunk : Buffer.concat([this.buffered, chunk]);
    }
    while (this.buffered.length >= 32) {
      const kind = this.buffered[0];
      const size = kind === 1 ? 32 + this.buffered.readUInt32LE(4) * 4 : 32;
      if (this.buffered.length < size) return;
      const message = this.buffered.subarray(0, size);
      this.buffered = this.buffered.subarray(size);
      if (kind === 0) this.onError(message);
      else if (kind === 1) this.onReply(message);
      else if (((kind ?? 0) & 0x7f) === 33) this.onClientMessage(message);
      // Other events (a MappingNotify after our own change, the root's substructure) need
      // nothing from us.
    }
  }

  /** The 16-bit sequence number of a reply or error is matched to the latest request it fits. */
  private settle(sequence16: number): Waiting | undefined {
    const index = this.waiting.findIndex((w) => (w.sequence & 0xffff) === sequence16);
    if (index < 0) return undefined;
    const [waiting] = this.waiting.splice(index, 1);
    return waiting;
  }

  /** A _NET_WM_PING answered to the root window: data[0] the atom, data[1] our token. */
  private onClientMessage(message: Buffer): void {
    if (message.readUInt32LE(12) !== this.atoms.get('_NET_WM_PING')) return;
    const answered = this.pings.get(message.readUInt32LE(16));
    answered?.();
  }

  private onReply(message: Buffer): void {
    this.settle(message.readUInt16LE(2))?.resolve(message);
  }

  private onError(message: Buffer): void {
    const error = new X11Error(
      `the X server refused request ${message[10]}.${message.readUInt16LE(8)} (error code ${message[1]})`,
    );
    const waiting = this.settle(message.readUInt16LE(2));
    if (waiting) waiting.reject(error);
    else this.error ??= error;
  }

  private end(reason: Error): void {
    if (this.lost) return;
    this.lost = reason;
    for (const waiting of this.waiting.splice(0)) waiting.reject(reason);
    this.socket.destroy();
  }

  private send(request: Buffer): number {
    if (this.lost) throw new X11Error(`the X connection is lost: ${this.lost.message}`);
    request.writeUInt16LE(request.length / 4, 2);
    // The requests of one tick (a typing's keys) leave in one write, which the server reads at
    // once: not a system call and a server wake-up each.
    if (!this.corked) {
      this.corked = true;
      this.socket.cork();
      process.nextTick(() => {
        this.corked = false;
        this.socket.uncork();
      });
    }
    this.socket.write(request);
    return ++this.sequence;
  }

  private roundTrip(request: Buffer, timeoutMs: number): Promise<Buffer> {
    const sequence = this.send(request);
    return new Promise<Buffer>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.settle(sequence & 0xffff);
        reject(new X11Error(`the X server did not answer within ${timeoutMs} ms`));
      }, timeoutMs);
      this.waiting.push({
        sequence,
        resolve: (reply) => {
          clearTimeout(timer);
          resolve(reply);
        },
        reject: (error) => {
          clearTimeout(timer);
          reject(error);
        },
      });
    });
  }

  async findXtest(timeoutMs: number): Promise<void> {
    const name = Buffer.from('XTEST', 'latin1');
    const request = Buffer.alloc(8 + name.length + pad4(name.length));
    request[0] = 98; // QueryExtension
    request.writeUInt16LE(name.length, 4);
    name.copy(request, 8);
    const reply = await this.roundTrip(request, timeoutMs);
    if (reply[8] !== 1) throw new X11Error('the X display has no XTEST extension');
    this.xtest = reply[9] ?? 0;
  }

  async keyboardMapping(): Promise<number[][]> {
    const { minKeycode, maxKeycode } = this.setup;
    const request = Buffer.alloc(8);
    request[0] = 101; // GetKeyboardMapping
    request[4] = minKeycode;
    request[5] = maxKeycode - minKeycode + 1;
    const reply = await this.roundTrip(request, 2000);
    const perKeycode = reply[1] ?? 0;
    const keys: number[][] = [];
    for (let code = 0; code <= maxKeycode - minKeycode; code++) {
      const levels: number[] = [];
      for (let level = 0; level < perKeycode; level++) {
        levels.push(reply.readUInt32LE(32 + (code * perKeycode + level) * 4));
      }
      keys.push(levels);
    }
    return keys;
  }

  changeKeyboardMapping(first: number, keysyms: readonly number[][]): void {
    const perKeycode = keysyms[0]?.length ?? 0;
    const request = Buffer.alloc(8 + keysyms.length * perKeycode * 4);
    request[0] = 100; // ChangeKeyboardMapping
    request[1] = keysyms.length;
    request[4] = first;
    request[5] = perKeycode;
    keysyms.forEach((levels, i) =>
      levels.forEach((keysym, level) =>
        request.writeUInt32LE(keysym, 8 + (i * perKeycode + level) * 4),
      ),
    );
    this.send(request);
  }

  fakeKey(keycode: number, down: boolean): void {
    const request = Buffer.alloc(36);
    request[0] = this.xtest;
    request[1] = 2; // FakeInput
    request[4] = down ? 2 : 3; // KeyPress, KeyRelease
    request[5] = keycode;
    request.writeUInt32LE(this.setup.root, 12);
    this.send(request);
  }

  async sync(timeoutMs: number): Promise<void> {
    const request = Buffer.alloc(4);
    request[0] = 43; // GetInputFocus
    await this.roundTrip(request, timeoutMs);
    const error = this.error;
    this.error = undefined;
    if (error) throw error;
  }

  private async atom(name: string): Promise<number> {
    const known = this.atoms.get(name);
    if (known !== undefined) return known;
    const bytes = Buffer.from(name, 'latin1');
    const request = Buffer.alloc(8 + bytes.length + pad4(bytes.length));
    request[0] = 16; // InternAtom
    request.writeUInt16LE(bytes.length, 4);
    bytes.copy(request, 8);
    const atom = (await this.roundTrip(request, 2000)).readUInt32LE(8);
    this.atoms.set(name, atom);
    return atom;
  }

  /** The window's parent (0 for the root), by QueryTree. */
  private async parentOf(window: number): Promise<number> {
    const request = Buffer.alloc(8);
    request[0] = 15; // QueryTree
    request.writeUInt32LE(window, 4);
    const reply = await this.roundTrip(request, 2000);
    return reply.readUInt32LE(8) === window ? 0 : reply.readUInt32LE(12);
  }

  /** Whether the window's WM_PROTOCOLS lists _NET_WM_PING. */
  private async takesPings(window: number): Promise<boolean> {
    const [protocols, ping] = await Promise.all([
      this.atom('WM_PROTOCOLS'),
      this.atom('_NET_WM_PING'),
    ]);
    const request = Buffer.alloc(24);
    request[0] = 20; // GetProperty
    request.writeUInt32LE(window, 4);
    request.writeUInt32LE(protocols, 8);
    request.writeUInt32LE(64, 20); // up to 64 atoms
    const reply = await this.roundTrip(request, 2000);
    if (reply[1] !== 32) return false;
    const count = reply.readUInt32LE(16);
    for (let i = 0; i < count; i++) if (reply.readUInt32LE(32 + i * 4) === ping) return true;
    return false;
  }

  async pingFocusedClient(timeoutMs: number): Promise<boolean> {
    const { root } = this.setup;
    if (!this.watchingRoot) {
      // The answer is sent to the root window for its substructure's listeners.
      const select = Buffer.alloc(16);
      select[0] = 2; // ChangeWindowAttributes
      select.writeUInt32LE(root, 4);
      select.writeUInt32LE(0x800, 8); // CWEventMask
      select.writeUInt32LE(1 << 19, 12); // SubstructureNotifyMask
      this.send(select);
      this.watchingRoot = true;
    }
    const focusRequest = Buffer.alloc(4);
    focusRequest[0] = 43; // GetInputFocus
    let window = (await this.roundTrip(focusRequest, timeoutMs)).readUInt32LE(8);
    // PointerRoot (1) and None (0) name no client; else up the tree to a window that takes pings.
    for (let depth = 0; window > 1 && window !== root && depth < 32; depth++) {
      if (await this.takesPings(window)) break;
      window = await this.parentOf(window);
    }
    if (window <= 1 || window === root) return false;
    const token = this.nextPing++ & 0xffffffff;
    const message = Buffer.alloc(44);
    message[0] = 25; // SendEvent, to the window's owner (event mask 0)
    message.writeUInt32LE(window, 4);
    message[12] = 33; // ClientMessage
    message[13] = 32; // format
    message.writeUInt32LE(window, 16);
    message.writeUInt32LE(await this.atom('WM_PROTOCOLS'), 20);
    message.writeUInt32LE(await this.atom('_NET_WM_PING'), 24);
    message.writeUInt32LE(token, 28);
    message.writeUInt32LE(window, 32);
    return new Promise<boolean>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pings.delete(token);
        reject(new X11Error(`the application did not answer a ping within ${timeoutMs} ms`));
      }, timeoutMs);
      this.pings.set(token, () => {
        clearTimeout(timer);
        this.pings.delete(token);
        resolve(true);
      });
      try {
        this.send(message);
      } catch (error) {
        clearTimeout(timer);
        this.pings.delete(token);
        reject(error instanceof Error ? error : new X11Error(String(error)));
      }
    });
  }

  close(): void {
    this.end(new X11Error('closed'));
  }
}
