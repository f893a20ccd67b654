import pino from 'pino';

export type Logger = pino.Logger;

/** In order of severity, so a config spec can use them as enum values. */
export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export interface LoggerOptions {
  /** Added to every line, so lines from many processes can be told apart. */
  service: string;
  level: LogLevel;
  /** Where the JSON lines go; stdout when absent. Tests pass a stream to read them back. */
  destination?: pino.DestinationStream;
}

/**
 * A JSON logger; modules take `logger.child({ component })`. Level names (not numbers) make
 * the lines readable by grep and by people.
 */
export function createLogger({ service, level, destination }: LoggerOptions): Logger {
  const options: pino.LoggerOptions = {
    level,
    base: { service },
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: { level: (label) => ({ level: label }) },
    // Bearer tokens travel in headers: never let a logged request leak one.
    redact: ['req.headers.authorization', 'headers.authorization'],
  };
  return destination ? pino(options, destination) : pino(options);
}
