import { ConfigError } from './config';
import { createLogger, type Logger } from './logger';
import type { Exit } from './shutdown';

export interface RunMainOptions {
  /** Names the process in the failure line, since a config error comes before any logger. */
  service: string;
  /** Where the failure line goes; a fatal-level JSON logger on stdout when absent. */
  logger?: Logger;
  /** Where a ConfigError's text goes; stderr when absent. */
  writeError?: (text: string) => void;
  exit?: Exit;
}

/**
 * Runs a service's start-up. A failure exits 1 with one clear line: a ConfigError is printed
 * as its plain text (one bad variable a line) because people read it; any other error is one
 * fatal JSON log line with the stack, like every other line the process writes.
 */
export async function runMain(main: () => Promise<void>, options: RunMainOptions): Promise<void> {
  const exit = options.exit ?? ((code: number) => process.exit(code));
  try {
    await main();
  } catch (err) {
    if (err instanceof ConfigError) {
      const write = options.writeError ?? ((text: string) => process.stderr.write(text));
      write(`${options.service}: ${err.message}\n`);
    } else {
      const logger = options.logger ?? createLogger({ service: options.service, level: 'fatal' });
      const message = err instanceof Error ? err.message : String(err);
      logger.fatal({ err }, `start failed: ${message}`);
    }
    exit(1);
  }
}
