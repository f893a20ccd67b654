import { EventEmitter } from 'node:events';
import { Writable } from 'node:stream';
import { createLogger } from './logger';
import { onShutdown, runShutdown, type ShutdownStep } from './shutdown';

function capture(): { logger: ReturnType<typeof createLogger>; messages: () => string[] } {
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(chunk.toString());
      done();
    },
  });
  const logger = createLogger({ service: 'test', level: 'info', destination: sink });
  return {
    logger,
    messages: () =>
      lines.map((line) => {
        const parsed = JSON.parse(line) as { msg: string; step?: string };
        return parsed.step ? `${parsed.msg}: ${parsed.step}` : parsed.msg;
      }),
  };
}

function recordingStep(name: string, order: string[], run?: () => Promise<void>): ShutdownStep {
  return {
    name,
    run: async () => {
      order.push(name);
      await run?.();
    },
  };
}

const silent = createLogger({ service: 'test', level: 'silent' });
const never = (): Promise<void> => new Promise<void>(() => undefined);

describe('runShutdown', () => {
  it('when every step succeeds, then they run in the given order, are logged, and the code is 0', async () => {
    const order: string[] = [];
    const { logger, messages } = capture();
    const code = await runShutdown(
      logger,
      [recordingStep('stop http', order), recordingStep('close connections', order)],
      { timeoutMs: 1000 },
    );
    expect(code).toBe(0);
    expect(order).toEqual(['stop http', 'close connections']);
    expect(messages()).toEqual([
      'shutdown step started: stop http',
      'shutdown step done: stop http',
      'shutdown step started: close connections',
      'shutdown step done: close connections',
      'shutdown finished',
    ]);
  });

  it('when a step throws, then the later steps still run and the code is 1', async () => {
    const order: string[] = [];
    const { logger, messages } = capture();
    const code = await runShutdown(
      logger,
      [
        recordingStep('drain', order, () => Promise.reject(new Error('stuck'))),
        recordingStep('close', order),
      ],
      { timeoutMs: 1000 },
    );
    expect(code).toBe(1);
    expect(order).toEqual(['drain', 'close']);
    expect(messages()).toContain('shutdown step failed: drain');
  });

  it('when a step hangs past the timeout, then the code is 1 and the hung step is named', async () => {
    const order: string[] = [];
    const { logger, messages } = capture();
    const code = await runShutdown(
      logger,
      [recordingStep('wait confirms', order, never), recordingStep('close', order)],
      { timeoutMs: 30 },
    );
    expect(code).toBe(1);
    expect(order).toEqual(['wait confirms']);
    expect(messages()).toContain('shutdown timed out: wait confirms');
  });
});

describe('onShutdown', () => {
  const disposers: Array<() => void> = [];
  afterEach(() => disposers.splice(0).forEach((dispose) => dispose()));

  function setup(steps: ShutdownStep[]): { source: EventEmitter; exited: Promise<number> } {
    const source = new EventEmitter();
    const exited = new Promise<number>((resolve) => {
      disposers.push(onShutdown(silent, steps, { timeoutMs: 1000, source, exit: resolve }));
    });
    return { source, exited };
  }

  it('when SIGTERM arrives, then the steps run in order and the process exits 0', async () => {
    const order: string[] = [];
    const { source, exited } = setup([recordingStep('a', order), recordingStep('b', order)]);
    expect(order).toEqual([]);
    source.emit('SIGTERM');
    expect(await exited).toBe(0);
    expect(order).toEqual(['a', 'b']);
  });

  it('when SIGINT arrives and a step fails, then the process exits 1', async () => {
    const { source, exited } = setup([{ name: 'bad', run: () => Promise.reject(new Error('x')) }]);
    source.emit('SIGINT');
    expect(await exited).toBe(1);
  });

  it('when a second signal arrives during shutdown, then it exits 1 at once', async () => {
    const source = new EventEmitter();
    const order: string[] = [];
    let timedOut!: () => void;
    const finished = new Promise<void>((resolve) => (timedOut = resolve));
    const codes: number[] = [];
    const exit = (code: number): void => {
      codes.push(code);
      if (codes.length === 2) timedOut();
    };
    disposers.push(
      onShutdown(silent, [recordingStep('hang', order, never)], { timeoutMs: 50, source, exit }),
    );
    source.emit('SIGTERM');
    expect(codes).toEqual([]);
    source.emit('SIGTERM');
    expect(codes).toEqual([1]);
    expect(order).toEqual(['hang']);
    // The first shutdown still ends by its timeout; waiting for it leaves no timer behind.
    await finished;
    expect(codes).toEqual([1, 1]);
  });

  it('when told to ignore a repeated signal, then a second one lets the stop finish', async () => {
    const source = new EventEmitter();
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const codes: number[] = [];
    const exited = new Promise<void>((resolve) => {
      const exit = (code: number) => resolve(void codes.push(code));
      const steps = [{ name: 'drain', run: () => held }];
      const options = { timeoutMs: 1000, source, exit, repeatedSignal: 'ignore' as const };
      disposers.push(onShutdown(silent, steps, options));
    });
    source.emit('SIGINT');
    source.emit('SIGINT');
    expect(codes).toEqual([]);
    release();
    await exited;
    expect(codes).toEqual([0]);
  });

  it('when disposed, then signals are no longer handled', () => {
    const source = new EventEmitter();
    const dispose = onShutdown(silent, [], { timeoutMs: 10, source, exit: jest.fn() });
    expect(source.listenerCount('SIGTERM')).toBe(1);
    dispose();
    expect(source.listenerCount('SIGTERM')).toBe(0);
    expect(source.listenerCount('SIGINT')).toBe(0);
  });
});
