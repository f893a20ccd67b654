/**
 * One D-Bus connection: to a bus (the session bus, the accessibility bus) or straight to one
 * application (AT-SPI's peer-to-peer socket, which skips the bus daemon). Method calls only,
 * each with a timeout, since a hung application must not hang the agent. Calls made in the same
 * tick go out in one write: a listing sends hundreds at once.
 */
import { connect, type Socket } from 'node:net';
import {
  decodeMessage,
  encodeMethodCall,
  MESSAGE_TYPE,
  MessageStream,
  type IncomingMessage,
} from './dbus.wire';

export type { IncomingMessage } from './dbus.wire';

/** What the peer answered instead of a result, or why there is no answer. */
export class DBusCallError extends Error {
  /** The D-Bus error name ('org.freedesktop.DBus.Error.UnknownObject' ...). */
  readonly type: string;

  constructor(type: string, message: string) {
    super(message === '' ? type : message);
    this.name = 'DBusCallError';
    this.type = type;
  }
}

/** The error names this module gives when the peer itself did not answer. */
export const NO_REPLY = 'org.freedesktop.DBus.Error.NoReply';
export const DISCONNECTED = 'org.freedesktop.DBus.Error.Disconnected';

export interface DBusCall {
  /** Omitted on a peer-to-peer connection. */
  destination?: string | undefined;
  path: string;
  interface: string;
  member: string;
  signature?: string;
  body?: unknown[];
}

interface Pending {
  resolve(body: unknown[]): void;
  reject(error: Error): void;
  timer: NodeJS.Timeout;
}

export interface DBusConnection {
  /** The body of the reply; DBusCallError for an error reply, a timeout (NO_REPLY) or a loss. */
  call(call: DBusCall, timeoutMs: number): Promise<unknown[]>;
  /** Whether the connection is gone (closed here, or by the peer); calls fail at once then. */
  readonly closed: boolean;
  /** Signals the bus routes to us (after an AddMatch). */
  onSignal(listener: (signal: IncomingMessage) => void): void;
  /** Called once when the connection goes, with the reason. */
  onClose(listener: (reason: Error) => void): void;
  close(): void;
}

/** The socket path of `unix:path=` / `unix:abstract=` addresses, or host and port of `tcp:`. */
function parseAddress(address: string): { path: string } | { host: string; port: number } {
  for (const entry of address.split(';')) {
    const colon = entry.indexOf(':');
    const transport = entry.slice(0, colon);
    const params = new Map(
      entry
        .slice(colon + 1)
        .split(',')
        .map((pair) => {
          const eq = pair.indexOf('=');
          return [pair.slice(0, eq), decodeURIComponent(pair.slice(eq + 1))] as const;
        }),
    );
    if (transport === 'unix' && params.get('path')) return { path: params.get('path') as string };
    // Linux's abstract socket namespace: Node takes it as a path starting with NUL.
    if (transport === 'unix' && params.get('abstract')) {
      return { path: `\0${params.get('abstract') as string}` };
    }
    if (transport === 'tcp' && params.get('port')) {
      return { host: params.get('host') ?? '127.0.0.1', port: Number(params.get('port')) };
    }
  }
  throw new Error(`No usable D-Bus address in '${address}' (unix:path, unix:abstract or tcp)`);
}

/** SASL EXTERNAL: the server reads our uid from the socket; answers "OK <guid>". */
function authenticate(socket: Socket): Promise<Buffer> {
  const uid = String(process.getuid?.() ?? 0);
  socket.write(`\0AUTH EXTERNAL ${Buffer.from(uid).toString('hex')}\r\n`);
  return new Promise((resolve, reject) => {
    let received = Buffer.alloc(0);
    const onData = (chunk: Buffer): void => {
      received = Buffer.concat([received, chunk]);
      const end = received.indexOf('\r\n');
      if (end < 0) return;
      socket.off('data', onData);
      const line = received.subarray(0, end).toString('latin1');
      if (!line.startsWith('OK ')) {
        reject(new Error(`D-Bus authentication refused: ${line}`));
        return;
      }
      socket.write('BEGIN\r\n');
      resolve(received.subarray(end + 2));
    };
    socket.on('data', onData);
  });
}

/**
 * Connects and authenticates; on a bus (`hello`), also says Hello, which the bus requires
 * before anything else. Rejects when nothing answers within `timeoutMs`.
 */
export async function openDBusConnection(
  address: string,
  options: { hello: boolean; timeoutMs: number },
): Promise<DBusConnection> {
  const target = parseAddress(address);
  const socket = 'path' in target ? connect(target.path) : connect(target.port, target.host);
  const connection = new Connection(socket);
  let timer: NodeJS.Timeout | undefined;
  const opening = (async () => {
    await new Promise<void>((resolve, reject) => {
      socket.once('connect', resolve);
      socket.once('error', reject);
    });
    const rest = await authenticate(socket);
    connection.start(rest);
    if (options.hello) {
      await connection.call(
        {
          destination: 'org.freedesktop.DBus',
          path: '/org/freedesktop/DBus',
          interface: 'org.freedesktop.DBus',
          member: 'Hello',
        },
        options.timeoutMs,
      );
    }
  })();
  opening.catch(() => undefined); // when the timeout won the race, its failure is expected
  try {
    await Promise.race([
      opening,
      new Promise<never>((_, reject) => {
        timer = setTimeout(
          () => reject(new Error(`${address} did not answer within ${options.timeoutMs} ms`)),
          options.timeoutMs,
        );
      }),
    ]);
  } catch (error) {
    connection.close();
    throw error;
  } finally {
    clearTimeout(timer);
  }
  return connection;
}

class Connection implements DBusConnection {
  private serial = 0;
  private readonly pending = new Map<number, Pending>();
  private readonly stream = new MessageStream();
  private readonly closeListeners: Array<(reason: Error) => void> = [];
  private readonly signalListeners: Array<(signal: IncomingMessage) => void> = [];
  private corked = false;
  private lost: Error | undefined;

  constructor(private readonly socket: Socket) {
    // Errors end the connection (below); without a listener Node would throw them.
    socket.on('error', (error) => this.end(error));
    socket.on('close', () => this.end(new Error('the connection was closed')));
  }

  get closed(): boolean {
    return this.lost !== undefined;
  }

  /** After authentication: `rest` is whatever came after the OK line. */
  start(rest: Buffer): void {
    this.socket.on('data', (chunk: Buffer) => this.receive(chunk));
    if (rest.length > 0) this.receive(rest);
  }

  private receive(chunk: Buffer): void {
    let messages: Buffer[];
    try {
      messages = this.stream.push(chunk);
    } catch (error) {
      this.end(error as Error); // a peer that breaks the framing cannot be read any further
      return;
    }
    for (const bytes of messages) {
      let message: IncomingMessage;
      try {
        message = decodeMessage(bytes);
      } catch {
        continue; // one unreadable message; its caller times out
      }
      if (message.type === MESSAGE_TYPE.signal) {
        for (const listener of this.signalListeners) listener(message);
        continue;
      }
      if (message.replySerial === undefined) continue; // calls to us: none expected
      const waiting = this.pending.get(message.replySerial);
      if (!waiting) continue; // timed out already
      this.pending.delete(message.replySerial);
      clearTimeout(waiting.timer);
      if (message.type === MESSAGE_TYPE.error) {
        const detail = typeof message.body[0] === 'string' ? message.body[0] : '';
        waiting.reject(new DBusCallError(message.errorName ?? 'unknown error', detail));
      } else {
        waiting.resolve(message.body);
      }
    }
  }

  call(call: DBusCall, timeoutMs: number): Promise<unknown[]> {
    const what = `${call.interface}.${call.member}${call.destination ? ` on ${call.destination}` : ''}`;
    if (this.lost) {
      return Promise.reject(
        new DBusCallError(DISCONNECTED, `${what}: the connection is gone (${this.lost.message})`),
      );
    }
    this.serial = this.serial >= 0xffffffff ? 1 : this.serial + 1;
    const serial = this.serial;
    let bytes: Buffer;
    try {
      bytes = encodeMethodCall({ ...call, serial });
    } catch (error) {
      return Promise.reject(error instanceof Error ? error : new Error(String(error)));
    }
    return new Promise<unknown[]>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(serial);
        reject(new DBusCallError(NO_REPLY, `${what} did not answer within ${timeoutMs} ms`));
      }, timeoutMs);
      this.pending.set(serial, { resolve, reject, timer });
      if (!this.corked) {
        this.corked = true;
        this.socket.cork();
        process.nextTick(() => {
          this.corked = false;
          this.socket.uncork();
        });
      }
      this.socket.write(bytes);
    });
  }

  onSignal(listener: (signal: IncomingMessage) => void): void {
    this.signalListeners.push(listener);
  }

  onClose(listener: (reason: Error) => void): void {
    if (this.lost) listener(this.lost);
    else this.closeListeners.push(listener);
  }

  private end(reason: Error): void {
    if (this.lost) return;
    this.lost = reason;
    this.socket.destroy();
    for (const [serial, waiting] of this.pending) {
      this.pending.delete(serial);
      clearTimeout(waiting.timer);
      waiting.reject(new DBusCallError(DISCONNECTED, `the connection is gone: ${reason.message}`));
    }
    for (const listener of this.closeListeners.splice(0)) listener(reason);
  }

  close(): void {
    this.end(new Error('closed'));
  }
}
