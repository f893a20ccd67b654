/**
 * One D-Bus connection: to a bus (the session bus, the accessibility bus) or straight to one
 * application (AT-SPI's peer-to-peer socket, which skips the bus daemon). Method calls only,
 * each with a timeout, since a hung application must not hang the agent. Calls made in the same
 * tick go out in one write, encoded into one buffer, and share one timer: a listing sends
 * hundreds at once.
 */
import { connect, type Socket } from 'node:net';
import {
  CallBatch,
  decodeMessage,
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

/**
 * The calls of one tick with the same timeout share one timer: a listing's hundreds of calls
 * cost one timer, not hundreds.
 */
interface TimerGroup {
  timer: NodeJS.Timeout;
  /** Calls of the group still waiting; the timer is cleared when none is left. */
  waiting: number;
}

/** A call's outcome: the body of its reply, or why there is none (DBusCallError mostly). */
export type CallOutcome = unknown[] | Error;

/** The calls of one callAll: their outcomes, filled in as they come. */
interface Waiter {
  outcomes: CallOutcome[];
  left: number;
  done(outcomes: CallOutcome[]): void;
}

interface Pending {
  call: DBusCall;
  group: TimerGroup;
  waiter: Waiter;
  index: number;
}

function finish({ waiter, index }: Pick<Pending, 'waiter' | 'index'>, outcome: CallOutcome): void {
  waiter.outcomes[index] = outcome;
  if (--waiter.left === 0) waiter.done(waiter.outcomes);
}

const describeCall = (call: DBusCall): string =>
  `${call.interface}.${call.member}${call.destination ? ` on ${call.destination}` : ''}`;

export interface DBusConnection {
  /** The body of the reply; DBusCallError for an error reply, a timeout (NO_REPLY) or a loss. */
  call(call: DBusCall, timeoutMs: number): Promise<unknown[]>;
  /**
   * Many calls at once, one outcome each in their order (never rejects): one promise for
   * hundreds of calls, where a promise each would cost a listing more than the calls do.
   */
  callAll(calls: readonly DBusCall[], timeoutMs: number): Promise<CallOutcome[]>;
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
  /** Calls made in this tick, sent together on the next one. */
  private outgoing: CallBatch | undefined;
  /** This tick's timer groups, by timeout. */
  private readonly groups = new Map<number, TimerGroup>();
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
      const waiting = this.settle(message.replySerial);
      if (!waiting) continue; // timed out already
      if (message.type === MESSAGE_TYPE.error) {
        const detail = typeof message.body[0] === 'string' ? message.body[0] : '';
        finish(waiting, new DBusCallError(message.errorName ?? 'unknown error', detail));
      } else {
        finish(waiting, message.body);
      }
    }
  }

  /** Takes the call off the waiting list (its group's timer goes with the group's last call). */
  private settle(serial: number): Pending | undefined {
    const waiting = this.pending.get(serial);
    if (!waiting) return undefined;
    this.pending.delete(serial);
    if (--waiting.group.waiting === 0) clearTimeout(waiting.group.timer);
    return waiting;
  }

  async call(call: DBusCall, timeoutMs: number): Promise<unknown[]> {
    const [outcome] = await this.callAll([call], timeoutMs);
    if (outcome instanceof Error) throw outcome;
    return outcome as unknown[];
  }

  callAll(calls: readonly DBusCall[], timeoutMs: number): Promise<CallOutcome[]> {
    return new Promise((resolve) => {
      const waiter: Waiter = {
        outcomes: new Array<CallOutcome>(calls.length),
        left: calls.length,
        done: resolve,
      };
      if (calls.length === 0) resolve([]);
      calls.forEach((call, index) => this.send(call, timeoutMs, waiter, index));
    });
  }

  private send(call: DBusCall, timeoutMs: number, waiter: Waiter, index: number): void {
    if (this.lost) {
      const reason = `${describeCall(call)}: the connection is gone (${this.lost.message})`;
      finish({ waiter, index }, new DBusCallError(DISCONNECTED, reason));
      return;
    }
    const serial = this.serial >= 0xffffffff ? 1 : this.serial + 1;
    const batch = this.outgoing ?? new CallBatch();
    try {
      batch.add(call, serial);
    } catch (error) {
      finish({ waiter, index }, error instanceof Error ? error : new Error(String(error)));
      return;
    }
    this.serial = serial;
    if (this.outgoing === undefined) {
      this.outgoing = batch;
      process.nextTick(() => this.flush());
    }
    const group = this.timerGroup(timeoutMs);
    group.waiting++;
    this.pending.set(serial, { call, waiter, index, group });
  }

  private timerGroup(timeoutMs: number): TimerGroup {
    let group = this.groups.get(timeoutMs);
    if (group === undefined) {
      const created: TimerGroup = {
        waiting: 0,
        timer: setTimeout(() => this.expire(created, timeoutMs), timeoutMs),
      };
      this.groups.set(timeoutMs, created);
      group = created;
    }
    return group;
  }

  private expire(group: TimerGroup, timeoutMs: number): void {
    for (const [serial, waiting] of this.pending) {
      if (waiting.group !== group) continue;
      this.pending.delete(serial);
      finish(
        waiting,
        new DBusCallError(
          NO_REPLY,
          `${describeCall(waiting.call)} did not answer within ${timeoutMs} ms`,
        ),
      );
    }
  }

  /** Sends this tick's calls in one write; the next tick's calls get timers of their own. */
  private flush(): void {
    const batch = this.outgoing;
    this.outgoing = undefined;
    this.groups.clear();
    if (batch && !batch.empty && !this.lost) this.socket.write(batch.bytes());
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
    for (const serial of [...this.pending.keys()]) {
      const waiting = this.settle(serial);
      if (waiting) {
        finish(
          waiting,
          new DBusCallError(DISCONNECTED, `the connection is gone: ${reason.message}`),
        );
      }
    }
    for (const listener of this.closeListeners.splice(0)) listener(reason);
  }

  close(): void {
    this.end(new Error('closed'));
  }
}
