import { parseCacheItem } from '../atspi/atspi.tree';
import {
  CallBatch,
  decodeMessage,
  encodeMethodCall,
  MAX_MESSAGE_BYTES,
  MESSAGE_TYPE,
  messageLength,
  MessageStream,
  parseSignature,
} from './dbus.wire';

// Bytes written by dbus-next 0.10.2 (the client this module replaced) for the same messages: a
// reference implementation, so a mistake made the same way in writing and reading still shows.
const FIXTURES = {
  extentsCall:
    '6c01000104000000070000007f00000001016f001e0000002f6f72672f613131792f61747370692f61636365737369626c652f313536000002017300180000006f72672e613131792e61747370692e436f6d706f6e656e740000000000000000030173000a000000476574457874656e747300000000000006017300040000003a312e3000000000080167000175000000000000',
  registerCall:
    '6c01000125000000020000008a00000001016f00180000002f6f72672f613131792f61747370692f7265676973747279000000000000000002017300170000006f72672e613131792e61747370692e526567697374727900030173000d00000052656769737465724576656e7400000006017300170000006f72672e613131792e61747370692e52656769737472790008016700047361737300000000000000170000006f626a6563743a6368696c6472656e2d6368616e67656400000000000000000000',
  extentsReply:
    '6c020001100000001e00000034000000050175000700000006017300040000003a312e350000000007017300040000003a312e300000000008016700062869696969290000000000b9020000a10200003f0000000f000000',
  itemsReply:
    '6c020001fc0100001f00000046000000050175000800000006017300040000003a312e350000000007017300040000003a312e30000000000801670018612828736f2928736f2928736f2969696173737573617529000000f401000000000000040000003a312e30000000001c0000002f6f72672f613131792f61747370692f61636365737369626c652f3200000000040000003a312e30000000001f0000002f6f72672f613131792f61747370692f61636365737369626c652f726f6f7400040000003a312e30000000001c0000002f6f72672f613131792f61747370692f61636365737369626c652f310000000000000000030000003d000000190000006f72672e613131792e61747370692e41636365737369626c65000000180000006f72672e613131792e61747370692e436f6d706f6e656e7400000000120000004f70657261746f722074657374207061676500005f000000060000006120706167650000080000000201004300000000040000003a312e30000000001e0000002f6f72672f613131792f61747370692f61636365737369626c652f3135360000040000003a312e30000000001f0000002f6f72672f613131792f61747370692f61636365737369626c652f726f6f7400040000003a312e30000000001c0000002f6f72672f613131792f61747370692f61636365737369626c652f320000000001000000000000001e000000190000006f72672e613131792e61747370692e41636365737369626c650000000b0000005072c3a96e6f6d20e29c93004f0000000000000000000000080000000009004201000000',
  attributesReply:
    '6c020001320000002000000033000000050175000900000006017300040000003a312e350000000007017300040000003a312e30000000000801670005617b73737d0000000000002a000000000000000200000069640000040000006c6173740000000000000000030000007461670005000000696e70757400',
  nameReply:
    '6c02000111000000210000002f000000050175000a00000006017300040000003a312e350000000007017300040000003a312e3000000000080167000176000001730000080000004368726f6d69756d00',
  errorReply:
    '6c03000113000000220000005700000004017300280000006f72672e667265656465736b746f702e444275732e4572726f722e556e6b6e6f776e4f626a6563740000000000000000050175000b00000007017300040000003a312e300000000008016700017300000e0000004e6f2073756368206f626a65637400',
  boolReply:
    '6c020001100000002300000030000000050175000c00000006017300040000003a312e350000000007017300040000003a312e300000000008016700026278000100000000000000fbffffffffffffff',
};
const bytes = (name: keyof typeof FIXTURES) => Buffer.from(FIXTURES[name], 'hex');

/** The calls dbus-next encoded as FIXTURES.extentsCall and FIXTURES.registerCall. */
const EXTENTS_CALL = {
  serial: 7,
  destination: ':1.0',
  path: '/org/a11y/atspi/accessible/156',
  interface: 'org.a11y.atspi.Component',
  member: 'GetExtents',
  signature: 'u',
  body: [0],
};
const REGISTER_CALL = {
  serial: 2,
  destination: 'org.a11y.atspi.Registry',
  path: '/org/a11y/atspi/registry',
  interface: 'org.a11y.atspi.Registry',
  member: 'RegisterEvent',
  signature: 'sass',
  body: ['object:children-changed', [], ''],
};

describe('D-Bus wire format', () => {
  test('when a method call is encoded, then its bytes are what dbus-next wrote', () => {
    expect(encodeMethodCall(EXTENTS_CALL).toString('hex')).toBe(FIXTURES.extentsCall);
    expect(encodeMethodCall(REGISTER_CALL).toString('hex')).toBe(FIXTURES.registerCall);
  });

  test('when calls are batched, then each is aligned from its own start, as if sent alone', () => {
    // 148 bytes: the second call starts at an offset that is not a multiple of 8.
    const batch = new CallBatch();
    batch.add(EXTENTS_CALL, EXTENTS_CALL.serial);
    expect(() => batch.add({ ...REGISTER_CALL, body: ['too few'] }, 3)).toThrow(/1 values/);
    batch.add(REGISTER_CALL, REGISTER_CALL.serial);
    expect(batch.bytes().toString('hex')).toBe(FIXTURES.extentsCall + FIXTURES.registerCall);
    expect(new MessageStream().push(batch.bytes()).map((m) => m.length)).toEqual([
      FIXTURES.extentsCall.length / 2,
      FIXTURES.registerCall.length / 2,
    ]);
  });

  test('when replies are decoded, then structs, arrays, dicts, variants and errors come out as values', () => {
    expect(decodeMessage(bytes('extentsReply'))).toEqual({
      type: MESSAGE_TYPE.methodReturn,
      serial: 30,
      replySerial: 7,
      sender: ':1.0',
      signature: '(iiii)',
      body: [[697, 673, 63, 15]],
    });
    expect(decodeMessage(bytes('attributesReply')).body).toEqual([{ id: 'last', tag: 'input' }]);
    expect(decodeMessage(bytes('nameReply')).body).toEqual([{ signature: 's', value: 'Chromium' }]);
    expect(decodeMessage(bytes('boolReply')).body).toEqual([true, -5]);
    expect(decodeMessage(bytes('errorReply'))).toMatchObject({
      type: MESSAGE_TYPE.error,
      replySerial: 11,
      errorName: 'org.freedesktop.DBus.Error.UnknownObject',
      body: ['No such object'],
    });
  });

  test('when Cache.GetItems answers, then each item parses into a node (UTF-8 names, both state words)', () => {
    const [items] = decodeMessage(bytes('itemsReply')).body as [unknown[]];
    expect(items.map(parseCacheItem)).toEqual([
      {
        ref: { bus: ':1.0', path: '/org/a11y/atspi/accessible/2' },
        parent: { bus: ':1.0', path: '/org/a11y/atspi/accessible/1' },
        indexInParent: 0,
        childCount: 3,
        interfaces: ['org.a11y.atspi.Accessible', 'org.a11y.atspi.Component'],
        name: 'Operator test page',
        role: 95,
        states: [1124073730, 0],
      },
      {
        ref: { bus: ':1.0', path: '/org/a11y/atspi/accessible/156' },
        parent: { bus: ':1.0', path: '/org/a11y/atspi/accessible/2' },
        indexInParent: 1,
        childCount: 0,
        interfaces: ['org.a11y.atspi.Accessible'],
        name: 'Prénom ✓',
        role: 79,
        states: [1107298560, 1],
      },
    ]);
  });

  test('when a message is big-endian, then it is read as such', () => {
    const message = Buffer.from(
      '42020001' +
        '00000004' +
        '00000001' +
        '0000000f' +
        '0501750000000007' +
        '08016700017500' +
        '00' +
        '0000002a',
      'hex',
    );
    expect(messageLength(message)).toBe(message.length);
    expect(decodeMessage(message)).toMatchObject({ replySerial: 7, body: [42] });
  });

  test('when every type is written and read back, then the values survive', () => {
    const body = [
      { answer: { signature: 'i', value: -42 }, names: { signature: 'as', value: ['a', 'bé'] } },
      [7, [[':1.2', '/a/b']], 3.5, 255, -2, 65535],
    ];
    const call = encodeMethodCall({
      serial: 9,
      path: '/p',
      interface: 'org.example.I',
      member: 'M',
      signature: 'a{sv}(ia(so)dynq)',
      body,
    });
    expect(decodeMessage(call)).toMatchObject({
      type: MESSAGE_TYPE.methodCall,
      serial: 9,
      path: '/p',
      interface: 'org.example.I',
      member: 'M',
      body,
    });
  });

  test('when messages arrive split and joined at any byte, then each comes out whole, in order', () => {
    const all = Buffer.concat(
      (['extentsReply', 'itemsReply', 'errorReply', 'nameReply'] as const).map(bytes),
    );
    for (const size of [1, 7, 16, 100, all.length]) {
      const stream = new MessageStream();
      const out: Buffer[] = [];
      for (let at = 0; at < all.length; at += size) {
        out.push(...stream.push(all.subarray(at, at + size)));
      }
      expect(out.map((m) => decodeMessage(m).replySerial)).toEqual([7, 8, 11, 10]);
    }
  });

  test('when a signature or a message is broken, then it is an error, not a wrong value', () => {
    expect(() => parseSignature('a(s')).toThrow(/Unclosed/);
    expect(() => parseSignature('z')).toThrow(/Unknown D-Bus type/);
    expect(() => decodeMessage(bytes('itemsReply').subarray(0, 200))).toThrow(/ends early/);
    const huge = Buffer.from(bytes('extentsReply').subarray(0, 16));
    huge.writeUInt32LE(MAX_MESSAGE_BYTES, 4);
    expect(() => messageLength(huge)).toThrow(/bytes/);
    expect(() =>
      encodeMethodCall({ serial: 1, path: '/', interface: 'i.I', member: 'M', signature: 'ss' }),
    ).toThrow(/0 values for signature 'ss'/);
  });
});
