/**
 * The agent's D-Bus connection against a real dbus-daemon (a private bus in a temp dir): calls
 * and their answers, error replies, a peer that never answers, hundreds of calls at once,
 * signals, and the bus going away under pending calls.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  DBusCallError,
  DISCONNECTED,
  NO_REPLY,
  openDBusConnection,
  type DBusConnection,
  type IncomingMessage,
} from '../src/desktop/linux/dbus/dbus.connection';
import { startProcess, stopProcess, waitUntil, type StartedProcess } from './support/processes';

const DRIVER = {
  destination: 'org.freedesktop.DBus',
  path: '/org/freedesktop/DBus',
  interface: 'org.freedesktop.DBus',
};

describe('D-Bus connection on a real dbus-daemon', () => {
  const dir = mkdtempSync(join(tmpdir(), 'dbus-conn-'));
  const address = `unix:path=${join(dir, 'bus')}`;
  let daemon: StartedProcess | undefined;
  const connections: DBusConnection[] = [];

  const open = async (): Promise<DBusConnection> => {
    const connection = await openDBusConnection(address, { hello: true, timeoutMs: 3000 });
    connections.push(connection);
    return connection;
  };

  beforeAll(async () => {
    daemon = startProcess(
      'dbus-daemon',
      'dbus-daemon',
      ['--session', '--nofork', `--address=${address}`],
      { env: process.env },
    );
    await waitUntil(
      'the private bus to answer',
      async () => {
        (await openDBusConnection(address, { hello: true, timeoutMs: 500 })).close();
        return true;
      },
      10_000,
    );
  });

  afterAll(async () => {
    connections.forEach((c) => c.close());
    if (daemon) await stopProcess(daemon);
    rmSync(dir, { recursive: true, force: true });
  });

  test('when a call is answered, then its body comes back', async () => {
    const bus = await open();
    const [id] = await bus.call({ ...DRIVER, member: 'GetId' }, 3000);
    expect(id).toMatch(/^[0-9a-f]{32}$/);
    await expect(
      bus.call(
        { ...DRIVER, member: 'NameHasOwner', signature: 's', body: ['org.example.Nobody'] },
        3000,
      ),
    ).resolves.toEqual([false]);
  });

  test('when the peer answers with an error, then it is a DBusCallError with its name', async () => {
    const bus = await open();
    const error = await bus
      .call({ ...DRIVER, member: 'NoSuchMethod' }, 3000)
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DBusCallError);
    expect((error as DBusCallError).type).toBe('org.freedesktop.DBus.Error.UnknownMethod');
  });

  test('when the peer never answers, then the call fails with NoReply after its timeout', async () => {
    const [caller, silent] = await Promise.all([open(), open()]);
    await silent.call(
      { ...DRIVER, member: 'RequestName', signature: 'su', body: ['org.example.Silent', 0] },
      3000,
    );
    const started = Date.now();
    const error = await caller
      .call(
        { destination: 'org.example.Silent', path: '/', interface: 'org.example.I', member: 'M' },
        300,
      )
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ type: NO_REPLY, message: expect.stringMatching(/300 ms/) });
    expect(Date.now() - started).toBeGreaterThanOrEqual(290);
  });

  test('when calls of one tick share a timer, then each still fails at its own timeout and answered ones are not failed', async () => {
    const [caller, silent] = await Promise.all([open(), open()]);
    await silent.call(
      { ...DRIVER, member: 'RequestName', signature: 'su', body: ['org.example.Mute', 0] },
      3000,
    );
    const unanswered = {
      destination: 'org.example.Mute',
      path: '/',
      interface: 'I.X',
      member: 'M',
    };
    const settledAt = (promise: Promise<unknown>) =>
      promise.then(
        (value) => ({ value, at: Date.now() }),
        (error: unknown) => ({ error, at: Date.now() }),
      );
    const started = Date.now();
    const [answered, short, long] = await Promise.all([
      settledAt(caller.call({ ...DRIVER, member: 'GetId' }, 300)),
      settledAt(caller.call(unanswered, 300)),
      settledAt(caller.call(unanswered, 900)),
    ]);
    expect(answered).toMatchObject({ value: [expect.any(String)] });
    expect(short).toMatchObject({ error: { type: NO_REPLY } });
    expect(long).toMatchObject({
      error: { type: NO_REPLY, message: expect.stringMatching(/900 ms/) },
    });
    expect(short.at - started).toBeGreaterThanOrEqual(290);
    expect(short.at - started).toBeLessThan(800);
    expect(long.at - started).toBeGreaterThanOrEqual(890);
  });

  test('when 500 calls go out at once, then each gets its own answer', async () => {
    const bus = await open();
    const names = Array.from({ length: 500 }, (_, i) =>
      i % 2 === 0 ? 'org.freedesktop.DBus' : `org.example.Absent${i}`,
    );
    const answers = await Promise.all(
      names.map((name) =>
        bus.call({ ...DRIVER, member: 'NameHasOwner', signature: 's', body: [name] }, 5000),
      ),
    );
    expect(answers.map(([owned]) => owned)).toEqual(names.map((_, i) => i % 2 === 0));
  });

  test('when calls go out with callAll, then each outcome comes back in its place, errors as values', async () => {
    const bus = await open();
    const outcomes = await bus.callAll(
      [
        { ...DRIVER, member: 'GetId' },
        { ...DRIVER, member: 'NoSuchMethod' },
        { ...DRIVER, member: 'NameHasOwner', signature: 's', body: ['org.freedesktop.DBus'] },
        { ...DRIVER, member: 'NameHasOwner', signature: 's', body: [] },
      ],
      3000,
    );
    expect(outcomes[0]).toEqual([expect.stringMatching(/^[0-9a-f]{32}$/)]);
    expect(outcomes[1]).toMatchObject({ type: 'org.freedesktop.DBus.Error.UnknownMethod' });
    expect(outcomes[2]).toEqual([true]);
    // A call that cannot be encoded fails alone, before anything is sent.
    expect(outcomes[3]).toBeInstanceOf(Error);
    expect((outcomes[3] as Error).message).toMatch(/0 values for signature 's'/);
    await expect(bus.callAll([], 3000)).resolves.toEqual([]);
  });

  test('when a matching signal is sent, then onSignal sees it', async () => {
    const listener = await open();
    const signals: IncomingMessage[] = [];
    listener.onSignal((signal) => signals.push(signal));
    await listener.call(
      {
        ...DRIVER,
        member: 'AddMatch',
        signature: 's',
        body: ["type='signal',member='NameOwnerChanged',arg0='org.example.Announced'"],
      },
      3000,
    );
    const owner = await open();
    await owner.call(
      { ...DRIVER, member: 'RequestName', signature: 'su', body: ['org.example.Announced', 0] },
      3000,
    );
    // The daemon also sends each connection its own NameAcquired, whatever the match rules, and
    // it may come after Hello's reply: look for the one signal the rule asked for.
    const changed = await waitUntil(
      'the NameOwnerChanged signal',
      () => signals.find((signal) => signal.member === 'NameOwnerChanged'),
      3000,
    );
    expect(changed).toMatchObject({
      interface: 'org.freedesktop.DBus',
      member: 'NameOwnerChanged',
      body: ['org.example.Announced', '', expect.stringMatching(/^:1\./)],
    });
  });

  test('when the address is unusable, then opening fails with the reason', async () => {
    await expect(
      openDBusConnection(`unix:path=${join(dir, 'none')}`, { hello: true, timeoutMs: 1000 }),
    ).rejects.toThrow(/ENOENT/);
    await expect(
      openDBusConnection('tcp:host=x', { hello: true, timeoutMs: 1000 }),
    ).rejects.toThrow(/No usable D-Bus address/);
  });

  // Last: it ends the bus.
  test('when the bus goes away, then pending calls fail at once as Disconnected, and so do later ones', async () => {
    const [caller, silent] = await Promise.all([open(), open()]);
    await silent.call(
      { ...DRIVER, member: 'RequestName', signature: 'su', body: ['org.example.Stuck', 0] },
      3000,
    );
    let closedWith: Error | undefined;
    caller.onClose((reason) => {
      closedWith = reason;
    });
    const pending = caller
      .call(
        { destination: 'org.example.Stuck', path: '/', interface: 'org.example.I', member: 'M' },
        30_000,
      )
      .catch((e: unknown) => e);
    const started = Date.now();
    await stopProcess(daemon as StartedProcess);
    daemon = undefined;
    expect(await pending).toMatchObject({ type: DISCONNECTED });
    expect(Date.now() - started).toBeLessThan(5000);
    expect(caller.closed).toBe(true);
    expect(closedWith?.message).toEqual(expect.any(String));
    await expect(caller.call({ ...DRIVER, member: 'GetId' }, 3000)).rejects.toMatchObject({
      type: DISCONNECTED,
    });
  });
});
