import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import readline from 'node:readline';

const root = path.resolve(__dirname, '../..');

export interface ServiceProcess {
  child: ChildProcess;
  /**
   * Resolves with the first log line whose msg matches (and that `where` accepts), rejects when
   * the process exits first.
   */
  waitForLog(
    pattern: RegExp,
    timeoutMs?: number,
    where?: (line: Record<string, unknown>) => boolean,
  ): Promise<Record<string, unknown>>;
  /** Ends the process with `signal` and waits until it has exited; returns its exit code. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
  /**
   * Resolves with the exit code once the process ended on its own and its output is read (every
   * log line in `lines`); rejects when it still runs after timeoutMs.
   */
  exited(timeoutMs?: number): Promise<number | null>;
  /** The JSON log lines so far. */
  readonly lines: ReadonlyArray<Record<string, unknown>>;
}

/**
 * Every class of the gateway's rate limits off, for every process a test starts (a test's env
 * may set one again): the suites send many requests through one token (bulk imports, floods of
 * searches); the limits are tested on their own (services/gateway/test/rate-limits.int.test.ts).
 */
export const noRateLimits: Record<string, string> = Object.fromEntries(
  ['INGEST', 'SEARCH', 'OPERATOR', 'ARCHIVE', 'ADMIN', 'UNAUTHENTICATED'].map((name) => [
    `GATEWAY_RATE_LIMIT_${name}`,
    'off',
  ]),
);

/**
 * Runs a service's built main (services/<name>/dist/main.js, as production does) with the given
 * environment; its JSON log lines are parsed so tests can wait for what it says.
 */
export function startService(name: string, env: Record<string, string>): ServiceProcess {
  const child = spawn(process.execPath, [path.join(root, 'services', name, 'dist/main.js')], {
    env: { PATH: process.env.PATH ?? '', LOG_LEVEL: 'info', ...noRateLimits, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: Array<Record<string, unknown>> = [];
  const listeners = new Set<(line: Record<string, unknown>) => void>();
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-4000);
  });
  readline.createInterface({ input: child.stdout }).on('line', (text) => {
    try {
      const line = JSON.parse(text) as Record<string, unknown>;
      lines.push(line);
      listeners.forEach((listener) => listener(line));
    } catch {
      // not a log line
    }
  });
  const exited = new Promise<number | null>((resolve) =>
    child.once('exit', (code) => resolve(code)),
  );
  // 'close' comes after stdout ended, so every line has been parsed by then.
  const closed = new Promise<number | null>((resolve) =>
    child.once('close', (code) => resolve(code)),
  );

  return {
    child,
    lines,
    exited(timeoutMs = 30_000) {
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<never>((_, reject) => {
        timer = setTimeout(
          () => reject(new Error(`${name} still runs after ${timeoutMs} ms; stderr: ${stderr}`)),
          timeoutMs,
        );
      });
      return Promise.race([closed, late]).finally(() => clearTimeout(timer));
    },
    waitForLog(pattern, timeoutMs = 20_000, where = () => true) {
      const matches = (line: Record<string, unknown>) =>
        pattern.test(String(line.msg)) && where(line);
      const seen = lines.find(matches);
      if (seen) return Promise.resolve(seen);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(
          () =>
            done(
              new Error(
                `${name}: no log ${pattern} within ${timeoutMs} ms; stderr: ${stderr}; last lines: ${lines
                  .slice(-5)
                  .map((line) => JSON.stringify(line).slice(0, 500))
                  .join('\n')}`,
              ),
            ),
          timeoutMs,
        );
        const listener = (line: Record<string, unknown>) => {
          if (matches(line)) done(undefined, line);
        };
        const onExit = (code: number | null) =>
          done(new Error(`${name} exited (${code}) before ${pattern}; stderr: ${stderr}`));
        function done(error?: Error, line?: Record<string, unknown>) {
          clearTimeout(timer);
          listeners.delete(listener);
          child.off('exit', onExit);
          if (error) reject(error);
          else resolve(line!);
        }
        listeners.add(listener);
        child.once('exit', onExit);
      });
    },
    async stop(signal = 'SIGTERM') {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return exited;
    },
  };
}
