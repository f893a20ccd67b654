import net from 'node:net';
import { BSON } from 'mongodb';

const OP_MSG = 2013;

export interface RefusingProxy {
  url: string;
  /** From now until `allow`, every command named in `commands` is answered with this error. */
  refuse(error: { code: number; codeName: string; errmsg: string }, commands: string[]): void;
  /**
   * From now until `allow`, every command named in `commands` (on `onCollection` only, when
   * given) is swallowed: never forwarded, never answered, as by a server that stopped answering
   * (FerretDB wedged) on a live socket.
   */
  stall(commands: string[], onCollection?: string): void;
  allow(): void;
  /** Commands refused so far. */
  refused(): number;
  close(): Promise<void>;
}

/**
 * A MongoDB wire-protocol proxy in front of the real server that can make the server refuse
 * chosen commands, as a server does after a credential rotation (code 13 Unauthorized): the
 * error reaches the real driver and adapter exactly as a server's own would. Everything else,
 * handshakes and heartbeats included, passes through untouched, so the driver sees a healthy,
 * reachable server that says no.
 */
export async function startRefusingProxy(upstreamUrl: string): Promise<RefusingProxy> {
  const upstream = new URL(upstreamUrl);
  let refusal: { error: Record<string, unknown>; commands: Set<string> } | undefined;
  let stalled: { commands: Set<string>; collection?: string } = { commands: new Set() };
  let refusedCount = 0;
  const sockets = new Set<net.Socket>();

  const server = net.createServer((client) => {
    const target = net.connect(Number(upstream.port), upstream.hostname);
    sockets.add(client).add(target);
    const closeBoth = () => {
      client.destroy();
      target.destroy();
    };
    client.on('error', closeBoth).on('close', closeBoth);
    target.on('error', closeBoth).on('close', closeBoth);
    target.pipe(client);
    let pending = Buffer.alloc(0);
    client.on('data', (chunk: Buffer) => {
      pending = Buffer.concat([pending, chunk]);
      while (pending.length >= 16) {
        const length = pending.readInt32LE(0);
        if (pending.length < length) break;
        const message = pending.subarray(0, length);
        pending = pending.subarray(length);
        if (isStalled(message, stalled)) continue;
        const reply = refusal && refusalFor(message, refusal);
        if (reply) {
          refusedCount += 1;
          client.write(reply);
        } else {
          target.write(message);
        }
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;

  return {
    url: `mongodb://127.0.0.1:${port}/`,
    refuse(error, commands) {
      refusal = { error: { ok: 0, ...error }, commands: new Set(commands) };
    },
    stall(commands, onCollection) {
      stalled = {
        commands: new Set(commands),
        ...(onCollection === undefined ? {} : { collection: onCollection }),
      };
    },
    allow() {
      refusal = undefined;
      stalled = { commands: new Set() };
    },
    refused: () => refusedCount,
    async close() {
      sockets.forEach((socket) => socket.destroy());
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

/** The command document an OP_MSG carries (undefined for any other message). */
function commandOf(message: Buffer): Record<string, unknown> | undefined {
  if (message.readInt32LE(12) !== OP_MSG) return undefined;
  // flagBits (4 bytes), then section kind 0: the command document.
  if (message.readUInt8(20) !== 0) return undefined;
  const size = message.readInt32LE(21);
  return BSON.deserialize(message.subarray(21, 21 + size));
}

const commandName = (message: Buffer) => Object.keys(commandOf(message) ?? {})[0] ?? '';

function isStalled(message: Buffer, stalled: { commands: Set<string>; collection?: string }) {
  const name = commandName(message);
  if (!stalled.commands.has(name)) return false;
  return stalled.collection === undefined || commandOf(message)?.[name] === stalled.collection;
}

/** The error reply for an OP_MSG whose command is refused, else undefined. */
function refusalFor(
  message: Buffer,
  refusal: { error: Record<string, unknown>; commands: Set<string> },
): Buffer | undefined {
  const requestId = message.readInt32LE(4);
  if (!refusal.commands.has(commandName(message))) return undefined;
  const body = BSON.serialize(refusal.error);
  const header = Buffer.alloc(21);
  header.writeInt32LE(16 + 4 + 1 + body.length, 0);
  header.writeInt32LE(requestId + 1_000_000, 4);
  header.writeInt32LE(requestId, 8);
  header.writeInt32LE(OP_MSG, 12);
  header.writeUInt32LE(0, 16);
  header.writeUInt8(0, 20);
  return Buffer.concat([header, body]);
}
