import {
  AppError,
  createEnvelope,
  TimeoutError,
  validators,
  type OperatorCommand,
} from '@screenfleet/contracts';
import { createLogger, createMetrics } from '@screenfleet/runtime';
import type { Desktop, ElementRef } from '../desktop';
import { unavailableDesktop } from '../domain/unavailable-desktop';
import { SnapshotStore } from '../domain/snapshots';
import { createAgentMetrics } from '../metrics';
import { createCommandHandler } from './command.handler';

const element = {
  role: 'entry',
  name: 'Last name',
  bounds: { x: 1, y: 2, width: 3, height: 4 },
  app: 'Chromium',
  window: 'w',
  ref: ':1.2/a' as ElementRef,
  interactability: 'definite' as const,
};

function setup(desktop?: Desktop, now?: () => number) {
  const pressed: string[] = [];
  const fake: Desktop = desktop ?? {
    listElements: async () => [element],
    describe: async (e) => e,
    focus: async () => undefined,
    pressKey: async (key) => {
      pressed.push(key);
    },
    close: async () => undefined,
  };
  const handle = createCommandHandler({
    desktop: fake,
    snapshots: new SnapshotStore(30_000),
    metrics: createAgentMetrics(createMetrics()),
    logger: createLogger({ service: 'test', level: 'silent' }),
    ...(now ? { now } : {}),
  });
  return { handle, pressed };
}

const list: OperatorCommand = { action: 'list', timeout_ms: 5000, app_name: 'chromium' };
const press: OperatorCommand = {
  action: 'press',
  timeout_ms: 5000,
  element_index: 0,
  key: 'a',
  modifiers: [],
};

describe('operator command handler', () => {
  it('when a listing then a press arrive, then both succeed with a valid result', async () => {
    const { handle, pressed } = setup();
    const listed = await handle(createEnvelope('operator.command', list));
    expect(validators.operatorResult.check(listed.payload)).toEqual([]);
    expect(listed.payload.listing?.elements).toHaveLength(1);
    const done = await handle(createEnvelope('operator.command', press));
    expect(done.payload).toMatchObject({ success: true });
    expect(pressed).toEqual(['a']);
  });

  it('when a command is older than its deadline, then it is refused and nothing is pressed', async () => {
    const { handle, pressed } = setup();
    await handle(createEnvelope('operator.command', list));
    const old = createEnvelope('operator.command', press, { now: new Date(Date.now() - 6500) });
    const reply = await handle(old);
    expect(reply.payload).toMatchObject({ success: false, code: 'timeout' });
    expect(pressed).toEqual([]);
  });

  it('when a command is still inside timeout_ms but within the safety margin, then it is refused (the margin shortens the window)', async () => {
    const { handle, pressed } = setup();
    await handle(createEnvelope('operator.command', list));
    const late = createEnvelope('operator.command', press, { now: new Date(Date.now() - 4900) });
    const reply = await handle(late);
    expect(reply.payload).toMatchObject({ success: false, code: 'timeout' });
    expect(reply.payload.message).toMatch(/not executed/);
    expect(pressed).toEqual([]);
  });

  it('when sent_at is further in the future than the clock tolerance, then nothing is pressed and the clocks are blamed', async () => {
    const { handle, pressed } = setup();
    await handle(createEnvelope('operator.command', list));
    const future = createEnvelope('operator.command', press, { now: new Date(Date.now() + 3000) });
    const reply = await handle(future);
    expect(reply.payload).toMatchObject({
      success: false,
      code: 'operation_failed',
      message: expect.stringMatching(/ahead of this agent's clock.*NTP/),
    });
    expect(pressed).toEqual([]);
  });

  it('when focusing the element takes the command past its deadline, then it is refused with timeout and nothing is pressed', async () => {
    let clock = Date.parse('2030-01-01T00:00:00.000Z');
    const pressed: string[] = [];
    const slow: Desktop = {
      listElements: async () => [element],
      describe: async (e) => e,
      focus: async () => {
        clock += 4900; // GrabFocus and the wait for the focused state, on a slow app
      },
      pressKey: async (key) => {
        pressed.push(key);
      },
      close: async () => undefined,
    };
    const { handle } = setup(slow, () => clock);
    await handle(createEnvelope('operator.command', list, { now: new Date(clock) }));
    const reply = await handle(createEnvelope('operator.command', press, { now: new Date(clock) }));
    expect(reply.payload).toMatchObject({ success: false, code: 'timeout' });
    expect(reply.payload.message).toMatch(/before the key press/);
    expect(pressed).toEqual([]);
  });

  it('when two listings race and the press names the first one, then 409 and nothing is pressed', async () => {
    const { handle, pressed } = setup();
    const first = await handle(createEnvelope('operator.command', list));
    await handle(createEnvelope('operator.command', { ...list, app_name: 'gedit' }));
    const cacheId = first.payload.listing?.cache_info.cache_id;
    const reply = await handle(createEnvelope('operator.command', { ...press, cache_id: cacheId }));
    expect(reply.payload).toMatchObject({ success: false, code: 'conflict' });
    expect(pressed).toEqual([]);
  });

  it.each([
    [
      'an AT-SPI call timeout',
      new AppError('operation_failed', 'GrabFocus did not answer within 5000 ms'),
    ],
    ['a TimeoutError', new TimeoutError('GetState did not answer within 5000 ms')],
  ])(
    'when a desktop call fails with %s, then operation_failed with the reason, not timeout (504)',
    async (_, error) => {
      const { handle } = setup({
        listElements: async () => [element],
        describe: () => Promise.reject(error),
        focus: async () => undefined,
        pressKey: async () => undefined,
        close: async () => undefined,
      });
      await handle(createEnvelope('operator.command', list));
      const reply = await handle(createEnvelope('operator.command', press));
      expect(reply.payload).toEqual({
        success: false,
        code: 'operation_failed',
        message: error.message,
      });
    },
  );

  it('when the desktop is unavailable, then every command answers desktop_unavailable with the reason', async () => {
    const { handle } = setup(unavailableDesktop('DISPLAY is not set'));
    const reply = await handle(createEnvelope('operator.command', list));
    expect(reply.payload).toEqual({
      success: false,
      code: 'desktop_unavailable',
      message: 'DISPLAY is not set',
    });
  });

  it('when the payload is not a command, then validation_failed', async () => {
    const { handle } = setup();
    const reply = await handle(createEnvelope('operator.command', { action: 'click' }));
    expect(reply.payload).toMatchObject({ success: false, code: 'validation_failed' });
  });
});
