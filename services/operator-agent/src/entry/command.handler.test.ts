import { createEnvelope, validators, type OperatorCommand } from '@screenfleet/contracts';
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

function setup(desktop?: Desktop) {
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

  it('when a command is older than its deadline plus skew, then it is refused and nothing is pressed', async () => {
    const { handle, pressed } = setup();
    await handle(createEnvelope('operator.command', list));
    const old = createEnvelope('operator.command', press, { now: new Date(Date.now() - 6500) });
    const reply = await handle(old);
    expect(reply.payload).toMatchObject({ success: false, code: 'timeout' });
    expect(pressed).toEqual([]);
  });

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
