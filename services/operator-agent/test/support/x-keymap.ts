import { connect } from 'node:net';

/**
 * The X keycodes held down on a local display, read with the core protocol's QueryKeymap over
 * the display's Unix socket (no Xlib, no extra package). For tests: "is a modifier stuck?".
 */
export async function keysDown(displayNumber: number): Promise<number[]> {
  const socket = connect(`/tmp/.X11-unix/X${displayNumber}`);
  let buffered = Buffer.alloc(0);
  let wanted: { bytes: number; resolve: (b: Buffer) => void } | undefined;
  const flush = () => {
    if (wanted && buffered.length >= wanted.bytes) {
      const chunk = buffered.subarray(0, wanted.bytes);
      buffered = buffered.subarray(wanted.bytes);
      const { resolve } = wanted;
      wanted = undefined;
      resolve(chunk);
    }
  };
  socket.on('data', (data: Buffer) => {
    buffered = Buffer.concat([buffered, data]);
    flush();
  });
  const read = (bytes: number) =>
    new Promise<Buffer>((resolve, reject) => {
      socket.once('error', reject);
      wanted = { bytes, resolve };
      flush();
    });
  try {
    await new Promise<void>((resolve, reject) => {
      socket.once('connect', resolve);
      socket.once('error', reject);
    });
    // Connection setup: little-endian, protocol 11.0, no authorisation.
    const setup = Buffer.alloc(12);
    setup.write('l', 0, 'latin1');
    setup.writeUInt16LE(11, 2);
    socket.write(setup);
    const head = await read(8);
    if (head[0] !== 1) throw new Error(`X connection refused (status ${head[0]})`);
    await read(head.readUInt16LE(6) * 4);
    // QueryKeymap: opcode 44, request length 1 (4 bytes). Reply: 8 bytes header + 32 bytes map.
    socket.write(Buffer.from([44, 0, 1, 0]));
    const reply = await read(40);
    const map = reply.subarray(8, 40);
    const down: number[] = [];
    for (let code = 0; code < 256; code++) {
      if ((map[code >> 3]! >> (code & 7)) & 1) down.push(code);
    }
    return down;
  } finally {
    socket.destroy();
  }
}
