import {
  AppError,
  createEnvelope,
  operatorTimings,
  TimeoutError,
  validators,
  type OperatorCommand,
} from '@screenfleet/contracts';
import { createLogger, createMetrics } from '@screenfleet/runtime';
import { assertBeforeDeadline, type Desktop, type ElementRef } from '../desktop/desktop';
import type { AgentClock } from '../domain/deadline';
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

function setup(desktop?: Desktop, clock?: AgentClock) {
  const pressed: string[] = [];
  const fake: Desktop = desktop ?? {
    listElements: async () => [element],
    describe: async (e) => e,
    focus: async () => undefined,
    pressKey: async (key) => {
      pressed.push(key);
    },
    click: async () => undefined,
    typeText: async () => undefined,
    close: async () => undefined,
  };
  const handle = createCommandHandler({
    desktop: fake,
    snapshots: new SnapshotStore(30_000),
    metrics: createAgentMetrics(createMetrics()),
    logger: createLogger({ service: 'test', level: 'silent' }),
    ...(clock ? { clock } : {}),
  });
  return { handle, pressed };
}

const { budgetMs } = operatorTimings(5000);
const list: OperatorCommand = {
  action: 'list',
  timeout_ms: 5000,
  budget_ms: budgetMs,
  requested_by: 'token-a',
  app_name: 'chromium',
};
const press: OperatorCommand = {
  action: 'press',
  timeout_ms: 5000,
  budget_ms: budgetMs,
  requested_by: 'token-a',
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

  it('when a command is inside timeout_ms but not before its end less the grace (by the wall clock), then it is refused', async () => {
    const { handle, pressed } = setup();
    await handle(createEnvelope('operator.command', list));
    const late = createEnvelope('operator.command', press, { now: new Date(Date.now() - 4100) });
    const reply = await handle(late);
    expect(reply.payload).toMatchObject({ success: false, code: 'timeout' });
    expect(reply.payload.message).toMatch(/not executed/);
    expect(pressed).toEqual([]);
  });

  it('when focusing the element takes the command past its budget, then it is refused with timeout and nothing is pressed', async () => {
    let time = Date.parse('2030-01-01T00:00:00.000Z');
    const pressed: string[] = [];
    const slow: Desktop = {
      listElements: async () => [element],
      describe: async (e) => e,
      focus: async () => {
        time += budgetMs + 1; // GrabFocus and the wait for the focused state, on a slow app
      },
      pressKey: async (key) => {
        pressed.push(key);
      },
      click: async () => undefined,
      typeText: async () => undefined,
      close: async () => undefined,
    };
    const { handle } = setup(slow, { wall: () => time, monotonic: () => time });
    await handle(createEnvelope('operator.command', list, { now: new Date(time) }));
    const reply = await handle(createEnvelope('operator.command', press, { now: new Date(time) }));
    expect(reply.payload).toMatchObject({ success: false, code: 'timeout' });
    expect(reply.payload.message).toMatch(/before the key press/);
    expect(pressed).toEqual([]);
  });

  /**
   * The gateway, the broker and the agent on one simulated timeline (true time, ms from the
   * send). The agent's wall clock is off by `skew`, its monotonic clock has another origin. The
   * broker drops a command not delivered within the expiration; the desktop's steps take time,
   * and the key press itself (a slow input module) takes PRESS_MS once a key went down.
   */
  describe('never a press after the gateway answered, with skewed clocks', () => {
    const TIMEOUT = 5000;
    const PRESS_MS = 300;
    const timings = operatorTimings(TIMEOUT);

    function simulate(skew: number, slowMs: number) {
      let now = 0; // true time
      const landed: number[] = []; // true times a press ended (its last key up)
      const clock: AgentClock = {
        wall: () => 1.9e12 + now + skew,
        monotonic: () => 777 + now,
      };
      const desktop: Desktop = {
        listElements: async () => [element],
        describe: async (e) => {
          now += slowMs / 2;
          return e;
        },
        focus: async () => {
          now += slowMs / 2;
        },
        pressKey: async (_key, _modifiers, options = {}) => {
          // What the input child does: no key goes down past the deadline.
          assertBeforeDeadline(options.deadline, clock.monotonic(), 'key down');
          now += PRESS_MS;
          landed.push(now);
        },
        click: async () => undefined,
        typeText: async () => undefined,
        close: async () => undefined,
      };
      const { handle } = setup(desktop, clock);
      /** The gateway's clock reads true time (+ the same origin as the agent's wall clock). */
      const gatewayNow = () => new Date(1.9e12 + now);
      return {
        handle,
        landed,
        gatewayNow,
        trueNow: () => now,
        advance: (ms: number) => (now += ms),
      };
    }

    it.each([-3000, -1000, 0, 1000, 3000])(
      'when the agent clock is %i ms off, then every press ends before the gateway answers (and an unhurried one succeeds)',
      async (skew) => {
        for (const queueMs of [0, 200, timings.expirationMs]) {
          for (const slowMs of [0, 1000, 2000, 2900, 3500, 6000]) {
            const sim = simulate(skew, slowMs);
            await sim.handle(createEnvelope('operator.command', list, { now: sim.gatewayNow() }));
            const sentAt = sim.trueNow();
            const envelope = createEnvelope('operator.command', press, { now: sim.gatewayNow() });
            sim.advance(queueMs); // waiting in the queue (the broker drops it after expirationMs)
            const reply = await sim.handle(envelope);
            for (const endedAt of sim.landed) {
              expect(endedAt - sentAt).toBeLessThanOrEqual(TIMEOUT);
            }
            if (slowMs === 0 && queueMs <= 200) {
              expect(reply.payload).toMatchObject({ success: true });
            }
          }
        }
      },
    );

    it('when the agent stalled with the command in its buffer (clocks agree), then it is refused when it resumes', async () => {
      const sim = simulate(0, 0);
      await sim.handle(createEnvelope('operator.command', list, { now: sim.gatewayNow() }));
      const envelope = createEnvelope('operator.command', press, { now: sim.gatewayNow() });
      sim.advance(TIMEOUT); // SIGSTOPped: the receipt looks fresh, sent_at does not
      const reply = await sim.handle(envelope);
      expect(reply.payload).toMatchObject({ success: false, code: 'timeout' });
      expect(sim.landed).toEqual([]);
    });
  });

  it('when another token listed last and a press names no cache_id, then 409 asking for cache_id; with its cache_id it is pressed', async () => {
    const { handle, pressed } = setup();
    const mine = await handle(createEnvelope('operator.command', list));
    await handle(
      createEnvelope('operator.command', { ...list, app_name: 'gedit', requested_by: 'token-b' }),
    );
    const refused = await handle(createEnvelope('operator.command', press));
    expect(refused.payload).toMatchObject({
      success: false,
      code: 'conflict',
      message: expect.stringMatching(/another client: send the cache_id/),
    });
    expect(pressed).toEqual([]);
    // Token B's own press (no cache_id) is fine: the newest listing is its own.
    const own = await handle(
      createEnvelope('operator.command', { ...press, requested_by: 'token-b' }),
    );
    expect(own.payload).toMatchObject({ success: true });
    // Token A's listing was replaced: its cache_id is a 409 too (nothing pressed on B's app).
    const cacheId = mine.payload.listing?.cache_info.cache_id;
    const stale = await handle(createEnvelope('operator.command', { ...press, cache_id: cacheId }));
    expect(stale.payload).toMatchObject({ success: false, code: 'conflict' });
    expect(pressed).toEqual(['a']);
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
        click: async () => undefined,
        typeText: async () => undefined,
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
