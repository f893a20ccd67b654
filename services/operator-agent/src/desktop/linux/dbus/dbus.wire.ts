/**
 * The D-Bus wire format (https://dbus.freedesktop.org/doc/dbus-specification.html#message-protocol),
 * enough for AT-SPI: method calls out, method returns, errors and signals in, every basic and
 * container type. Pure (no I/O). Values come out as dbus-next gave them: structs as arrays,
 * dicts as objects, variants as { signature, value }, 64-bit integers as numbers.
 *
 * Why not a library: dbus-next spent about 0.25 ms of CPU per call (generic marshalling, a
 * Buffer per value, garbage), which made listing a 500-element page cost over 100 ms in Node
 * alone. Here a call is one Buffer and a reply one pass over its bytes.
 */

export const MESSAGE_TYPE = { methodCall: 1, methodReturn: 2, error: 3, signal: 4 } as const;

/** Header field codes. */
const FIELD = {
  path: 1,
  interface: 2,
  member: 3,
  errorName: 4,
  replySerial: 5,
  destination: 6,
  sender: 7,
  signature: 8,
} as const;

/** NO_REPLY_EXPECTED and friends are never set: every call here waits for its answer. */
const PROTOCOL_VERSION = 1;
/** The fixed part of a header: endianness, type, flags, version, body length, serial, fields length. */
const FIXED_HEADER = 16;
/** The specification's limit; a peer announcing more is broken, not slow. */
export const MAX_MESSAGE_BYTES = 128 * 1024 * 1024;

export interface Variant {
  signature: string;
  value: unknown;
}

export interface MethodCall {
  serial: number;
  /** Omitted on a peer-to-peer connection, where nobody routes by it. */
  destination?: string | undefined;
  path: string;
  interface: string;
  member: string;
  signature?: string;
  body?: unknown[];
}

export interface IncomingMessage {
  type: number;
  serial: number;
  replySerial?: number;
  errorName?: string;
  path?: string;
  interface?: string;
  member?: string;
  sender?: string;
  signature: string;
  body: unknown[];
}

/** One complete type of a signature: its code and, for containers, what it holds. */
interface TypeNode {
  code: string;
  children: TypeNode[];
}

const ALIGNMENT: Record<string, number> = {
  y: 1,
  b: 4,
  n: 2,
  q: 2,
  i: 4,
  u: 4,
  x: 8,
  t: 8,
  d: 8,
  h: 4,
  s: 4,
  o: 4,
  g: 1,
  a: 4,
  '(': 8,
  '{': 8,
  v: 1,
};

const parsedSignatures = new Map<string, TypeNode[]>();

/** The complete types of a signature ('a(so)i' -> [a(so), i]); cached, signatures repeat. */
export function parseSignature(signature: string): TypeNode[] {
  const known = parsedSignatures.get(signature);
  if (known) return known;
  let pos = 0;
  const one = (): TypeNode => {
    const code = signature[pos++];
    if (code === undefined) throw new Error(`Incomplete D-Bus signature '${signature}'`);
    if (code === 'a') return { code, children: [one()] };
    if (code === '(' || code === '{') {
      const close = code === '(' ? ')' : '}';
      const children: TypeNode[] = [];
      while (signature[pos] !== close) {
        if (pos >= signature.length) throw new Error(`Unclosed '${code}' in '${signature}'`);
        children.push(one());
      }
      pos++;
      return { code, children };
    }
    if (ALIGNMENT[code] === undefined) {
      throw new Error(`Unknown D-Bus type '${code}' in '${signature}'`);
    }
    return { code, children: [] };
  };
  const types: TypeNode[] = [];
  while (pos < signature.length) types.push(one());
  if (parsedSignatures.size < 256) parsedSignatures.set(signature, types);
  return types;
}

/**
 * Writes little-endian values at their alignment from the start of the message (`start`):
 * several messages can follow one another in one buffer.
 */
class Writer {
  private buffer: Buffer;
  pos = 0;
  start = 0;

  constructor(size = 256) {
    this.buffer = Buffer.allocUnsafe(size);
  }

  private room(bytes: number): void {
    if (this.pos + bytes <= this.buffer.length) return;
    const bigger = Buffer.allocUnsafe(Math.max(this.buffer.length * 2, this.pos + bytes));
    this.buffer.copy(bigger, 0, 0, this.pos);
    this.buffer = bigger;
  }

  align(to: number): void {
    const padded = this.start + ((this.pos - this.start + to - 1) & ~(to - 1));
    this.room(padded - this.pos);
    this.buffer.fill(0, this.pos, padded);
    this.pos = padded;
  }

  u8(value: number): void {
    this.room(1);
    this.buffer[this.pos++] = value;
  }

  u32(value: number): void {
    this.align(4);
    this.room(4);
    this.buffer.writeUInt32LE(value >>> 0, this.pos);
    this.pos += 4;
  }

  setU32(at: number, value: number): void {
    this.buffer.writeUInt32LE(value, at);
  }

  /** The bytes of a string and its terminating NUL; the length prefix is the caller's. */
  private text(value: string): number {
    const length = Buffer.byteLength(value);
    this.room(length + 1);
    this.buffer.write(value, this.pos, 'utf8');
    this.pos += length;
    this.buffer[this.pos++] = 0;
    return length;
  }

  string(value: string): void {
    this.u32(Buffer.byteLength(value));
    this.text(value);
  }

  signature(value: string): void {
    this.u8(Buffer.byteLength(value));
    this.text(value);
  }

  value(type: TypeNode, value: unknown): void {
    const { code } = type;
    switch (code) {
      case 'y':
        return this.u8(Number(value));
      case 'b':
        return this.u32(value ? 1 : 0);
      case 'n':
      case 'q':
        this.align(2);
        this.room(2);
        if (code === 'n') this.buffer.writeInt16LE(Number(value), this.pos);
        else this.buffer.writeUInt16LE(Number(value), this.pos);
        this.pos += 2;
        return;
      case 'i':
        this.align(4);
        this.room(4);
        this.buffer.writeInt32LE(Number(value), this.pos);
        this.pos += 4;
        return;
      case 'u':
      case 'h':
        return this.u32(Number(value));
      case 'x':
      case 't':
        this.align(8);
        this.room(8);
        if (code === 'x') this.buffer.writeBigInt64LE(BigInt(value as number), this.pos);
        else this.buffer.writeBigUInt64LE(BigInt(value as number), this.pos);
        this.pos += 8;
        return;
      case 'd':
        this.align(8);
        this.room(8);
        this.buffer.writeDoubleLE(Number(value), this.pos);
        this.pos += 8;
        return;
      case 's':
      case 'o':
        return this.string(String(value));
      case 'g':
        return this.signature(String(value));
      case 'v': {
        const variant = value as Variant;
        const [inner] = parseSignature(variant.signature);
        if (!inner) throw new Error('A variant needs a signature');
        this.signature(variant.signature);
        return this.value(inner, variant.value);
      }
      case 'a': {
        const element = type.children[0] as TypeNode;
        this.u32(0);
        const lengthAt = this.pos - 4;
        this.align(ALIGNMENT[element.code] as number);
        const start = this.pos;
        if (element.code === '{') {
          const [key, entry] = element.children as [TypeNode, TypeNode];
          for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
            this.align(8);
            this.value(key, k);
            this.value(entry, v);
          }
        } else {
          for (const item of value as unknown[]) this.value(element, item);
        }
        this.setU32(lengthAt, this.pos - start);
        return;
      }
      case '(': {
        this.align(8);
        const fields = value as unknown[];
        type.children.forEach((child, i) => this.value(child, fields[i]));
        return;
      }
      default:
        throw new Error(`Cannot write D-Bus type '${code}'`);
    }
  }

  bytes(): Buffer {
    return this.buffer.subarray(0, this.pos);
  }
}

/** One header field: its code, the signature of its one type and the value. */
function writeField(w: Writer, code: number, value: string, typeCode: 'o' | 's' | 'g'): void {
  w.align(8);
  w.u8(code);
  w.signature(typeCode);
  if (typeCode === 'g') w.signature(value);
  else w.string(value);
}

/** Appends one method call to `w`, at its current position. */
function writeMethodCall(w: Writer, call: Omit<MethodCall, 'serial'>, serial: number): void {
  const start = w.pos;
  w.start = start;
  w.u8(0x6c); // 'l': little endian
  w.u8(MESSAGE_TYPE.methodCall);
  w.u8(0);
  w.u8(PROTOCOL_VERSION);
  w.u32(0); // body length, set below
  w.u32(serial);
  w.u32(0); // header fields length, set below
  writeField(w, FIELD.path, call.path, 'o');
  writeField(w, FIELD.interface, call.interface, 's');
  writeField(w, FIELD.member, call.member, 's');
  if (call.destination !== undefined) writeField(w, FIELD.destination, call.destination, 's');
  const signature = call.signature ?? '';
  if (signature !== '') writeField(w, FIELD.signature, signature, 'g');
  w.setU32(start + 12, w.pos - start - FIXED_HEADER);
  w.align(8);
  const bodyStart = w.pos;
  const types = parseSignature(signature);
  const body = call.body ?? [];
  if (body.length !== types.length) {
    throw new Error(`${call.member}: ${body.length} values for signature '${signature}'`);
  }
  for (let i = 0; i < types.length; i++) w.value(types[i] as TypeNode, body[i]);
  w.setU32(start + 4, w.pos - bodyStart);
}

/** One method call as the bytes to send. */
export function encodeMethodCall(call: MethodCall): Buffer {
  const w = new Writer();
  writeMethodCall(w, call, call.serial);
  return w.bytes();
}

/**
 * Method calls encoded one after another into one buffer, to be sent in one write: a listing
 * sends hundreds at once, and one buffer costs far less than hundreds.
 */
export class CallBatch {
  private readonly writer = new Writer();

  /** Appends the call; on an error (a value that does not fit its signature) nothing is added. */
  add(call: Omit<MethodCall, 'serial'>, serial: number): void {
    const before = this.writer.pos;
    try {
      writeMethodCall(this.writer, call, serial);
    } catch (error) {
      this.writer.pos = before;
      throw error;
    }
  }

  get empty(): boolean {
    return this.writer.pos === 0;
  }

  bytes(): Buffer {
    return this.writer.bytes();
  }
}

/** Reads values at their alignment from the start of one message. */
class Reader {
  pos = 0;
  private readonly le: boolean;

  constructor(private readonly buffer: Buffer) {
    const endian = buffer[0];
    if (endian !== 0x6c && endian !== 0x42) throw new Error('Not a D-Bus message');
    this.le = endian === 0x6c;
  }

  private align(to: number): void {
    this.pos = (this.pos + to - 1) & ~(to - 1);
  }

  private need(bytes: number): void {
    if (this.pos + bytes > this.buffer.length) throw new Error('D-Bus message ends early');
  }

  u32(): number {
    this.align(4);
    this.need(4);
    const value = this.le ? this.buffer.readUInt32LE(this.pos) : this.buffer.readUInt32BE(this.pos);
    this.pos += 4;
    return value;
  }

  private text(length: number): string {
    this.need(length + 1);
    const value = this.buffer.toString('utf8', this.pos, this.pos + length);
    this.pos += length + 1;
    return value;
  }

  signature(): string {
    this.need(1);
    return this.text(this.buffer[this.pos++] as number);
  }

  value(type: TypeNode): unknown {
    const b = this.buffer;
    switch (type.code) {
      case 'y':
        this.need(1);
        return b[this.pos++];
      case 'b':
        return this.u32() !== 0;
      case 'n':
      case 'q': {
        this.align(2);
        this.need(2);
        const at = this.pos;
        this.pos += 2;
        if (type.code === 'n') return this.le ? b.readInt16LE(at) : b.readInt16BE(at);
        return this.le ? b.readUInt16LE(at) : b.readUInt16BE(at);
      }
      case 'i': {
        this.align(4);
        this.need(4);
        const at = this.pos;
        this.pos += 4;
        return this.le ? b.readInt32LE(at) : b.readInt32BE(at);
      }
      case 'u':
      case 'h':
        return this.u32();
      case 'x':
      case 't': {
        this.align(8);
        this.need(8);
        const at = this.pos;
        this.pos += 8;
        if (type.code === 'x') return Number(this.le ? b.readBigInt64LE(at) : b.readBigInt64BE(at));
        return Number(this.le ? b.readBigUInt64LE(at) : b.readBigUInt64BE(at));
      }
      case 'd': {
        this.align(8);
        this.need(8);
        const at = this.pos;
        this.pos += 8;
        return this.le ? b.readDoubleLE(at) : b.readDoubleBE(at);
      }
      case 's':
      case 'o':
        return this.text(this.u32());
      case 'g':
        return this.signature();
      case 'v': {
        const signature = this.signature();
        const [inner] = parseSignature(signature);
        if (!inner) throw new Error('A variant without a type');
        return { signature, value: this.value(inner) } satisfies Variant;
      }
      case 'a': {
        const length = this.u32();
        const element = type.children[0] as TypeNode;
        this.align(ALIGNMENT[element.code] as number);
        const end = this.pos + length;
        this.need(length);
        if (element.code === '{') {
          const [key, entry] = element.children as [TypeNode, TypeNode];
          const dict: Record<string, unknown> = {};
          while (this.pos < end) {
            this.align(8);
            const k = this.value(key);
            dict[String(k)] = this.value(entry);
          }
          return dict;
        }
        const items: unknown[] = [];
        while (this.pos < end) items.push(this.value(element));
        return items;
      }
      case '(': {
        this.align(8);
        const fields: unknown[] = [];
        for (const child of type.children) fields.push(this.value(child));
        return fields;
      }
      default:
        throw new Error(`Cannot read D-Bus type '${type.code}'`);
    }
  }

  /** One header field: its code and value. */
  field(): { code: number; value: unknown } {
    this.align(8);
    this.need(1);
    const code = this.buffer[this.pos++] as number;
    const [type] = parseSignature(this.signature());
    return { code, value: this.value(type as TypeNode) };
  }

  /** Where the header's field array ends (pos is then at its start). */
  fieldsEnd(): number {
    this.pos = 12;
    const length = this.u32();
    this.need(length);
    return FIXED_HEADER + length;
  }

  bodyStart(): void {
    this.align(8);
  }
}

/** The total length of the message starting at `header` (its first 16 bytes), from its header. */
export function messageLength(header: Buffer): number {
  const le = header[0] === 0x6c;
  if (!le && header[0] !== 0x42) throw new Error('Not a D-Bus message');
  const bodyLength = le ? header.readUInt32LE(4) : header.readUInt32BE(4);
  const fieldsLength = le ? header.readUInt32LE(12) : header.readUInt32BE(12);
  const length = FIXED_HEADER + ((fieldsLength + 7) & ~7) + bodyLength;
  if (length > MAX_MESSAGE_BYTES) throw new Error(`A D-Bus message of ${length} bytes`);
  return length;
}

/** The header fields a message keeps, by code (destination, unix fds: nothing here needs them). */
const KEPT_FIELDS: Partial<Record<number, keyof IncomingMessage>> = {
  [FIELD.replySerial]: 'replySerial',
  [FIELD.signature]: 'signature',
  [FIELD.errorName]: 'errorName',
  [FIELD.path]: 'path',
  [FIELD.interface]: 'interface',
  [FIELD.member]: 'member',
  [FIELD.sender]: 'sender',
};

/** One whole message. */
export function decodeMessage(bytes: Buffer): IncomingMessage {
  const reader = new Reader(bytes);
  reader.pos = 8;
  const message: IncomingMessage = {
    type: bytes[1] as number,
    serial: reader.u32(),
    signature: '',
    body: [],
  };
  const end = reader.fieldsEnd();
  while (reader.pos < end) {
    const { code, value } = reader.field();
    const kept = KEPT_FIELDS[code];
    if (kept !== undefined) (message as unknown as Record<string, unknown>)[kept] = value;
  }
  reader.bodyStart();
  for (const type of parseSignature(message.signature)) message.body.push(reader.value(type));
  return message;
}

/**
 * Cuts a byte stream into messages. Chunks are kept until a message is complete, so a large
 * reply (Cache.GetItems of a big page spans many socket reads) is copied once.
 */
export class MessageStream {
  private chunks: Buffer[] = [];
  private buffered = 0;

  push(chunk: Buffer): Buffer[] {
    this.chunks.push(chunk);
    this.buffered += chunk.length;
    const messages: Buffer[] = [];
    for (;;) {
      if (this.buffered < FIXED_HEADER) break;
      const head = this.take(FIXED_HEADER, false);
      const length = messageLength(head);
      if (this.buffered < length) break;
      messages.push(this.take(length, true));
    }
    return messages;
  }

  /** The first `bytes` buffered bytes; `consume` removes them. */
  private take(bytes: number, consume: boolean): Buffer {
    const first = this.chunks[0] as Buffer;
    let out: Buffer;
    if (first.length >= bytes) {
      out = first.subarray(0, bytes);
    } else {
      const all = Buffer.concat(this.chunks, this.buffered);
      this.chunks = [all];
      out = all.subarray(0, bytes);
    }
    if (consume) {
      const head = this.chunks[0] as Buffer;
      if (head.length === bytes) this.chunks.shift();
      else this.chunks[0] = head.subarray(bytes);
      this.buffered -= bytes;
    }
    return out;
  }
}
