import type { Logger } from './logger';

export interface ShutdownStep {
  name: string;
  run: () => Promise<void>;
}

export type Exit = (code: number) => void;

/** Where signals come from; `process` in a service, an EventEmitter in tests. */
export interface SignalSource {
  on(signal: NodeJS.Signals, listener: () => void): unknown;
  off(signal: NodeJS.Signals, listener: () => void): unknown;
}

export interface ShutdownOptions {
  /** The whole shutdown, all steps together; past it the process exits 1. */
  timeoutMs: number;
  signals?: readonly NodeJS.Signals[];
  /** Injected so tests can watch the exit code without ending jest. */
  exit?: Exit;
  source?: SignalSource;
  /**
   * A signal during the stop: 'exit' 1 at once (default: an operator pressing Ctrl-C twice means
   * it), or 'ignore' (`npm start`: Ctrl-C reaches npm and the process alike, and npm relays it,
   * so one Ctrl-C arrives twice and must not cut the graceful stop short).
   */
  repeatedSignal?: 'exit' | 'ignore';
}

/**
 * Runs the steps in the given order (callers list them in reverse order of start: stop HTTP
 * intake, wait for pending confirms, wait for in-flight handlers, close connections).
 * Resolves to the exit code: 0 when all succeeded, 1 when one failed or time ran out.
 * A failed step does not stop the later ones: connections still get closed.
 */
export async function runShutdown(
  logger: Logger,
  steps: readonly ShutdownStep[],
  { timeoutMs }: { timeoutMs: number },
): Promise<number> {
  let current = '';
  let failed = false;
  const all = (async () => {
    for (const step of steps) {
      current = step.name;
      const started = Date.now();
      logger.info({ step: step.name }, 'shutdown step started');
      try {
        await step.run();
        logger.info({ step: step.name, durationMs: Date.now() - started }, 'shutdown step done');
      } catch (err) {
        failed = true;
        logger.error({ step: step.name, err }, 'shutdown step failed');
      }
    }
  })();

  let timer: NodeJS.Timeout | undefined;
  // Not unref'd on purpose: if a hung step leaves the event loop empty, Node would exit 0.
  const timedOut = new Promise<true>((resolve) => {
    timer = setTimeout(() => resolve(true), timeoutMs);
  });
  try {
    if ((await Promise.race([all.then(() => false), timedOut])) === true) {
      logger.error({ step: current, timeoutMs }, 'shutdown timed out');
      return 1;
    }
  } finally {
    clearTimeout(timer);
  }
  logger.info({ failed }, failed ? 'shutdown finished with errors' : 'shutdown finished');
  return failed ? 1 : 0;
}

/**
 * For a process's host only (service-host.ts): on the first SIGTERM/SIGINT run the steps and
 * exit with their code; a second signal exits 1 at once, or is ignored (`repeatedSignal`).
 * Returns a function that removes the signal listeners.
 */
export function onShutdown(
  logger: Logger,
  steps: readonly ShutdownStep[],
  options: ShutdownOptions,
): () => void {
  const log = logger.child({ component: 'shutdown' });
  const exit = options.exit ?? ((code: number) => process.exit(code));
  const source = options.source ?? process;
  const signals = options.signals ?? ['SIGTERM', 'SIGINT'];
  let started = false;

  const listeners = signals.map((signal) => {
    const listener = (): void => {
      if (started) {
        if (options.repeatedSignal === 'ignore') return;
        log.warn({ signal }, 'second signal: exiting now');
        exit(1);
        return;
      }
      started = true;
      log.info({ signal }, 'shutting down');
      void runShutdown(log, steps, options).then(exit);
    };
    source.on(signal, listener);
    return { signal, listener };
  });

  return () => {
    for (const { signal, listener } of listeners) source.off(signal, listener);
  };
}
