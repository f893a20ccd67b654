/** The slice of a logger the bus needs; pino's Logger fits it. */
export interface Logger {
  debug(details: object, message?: string): void;
  info(details: object, message?: string): void;
  warn(details: object, message?: string): void;
  error(details: object, message?: string): void;
  child?(bindings: Record<string, unknown>): Logger;
}

export const silentLogger: Logger = {
  debug: () => undefined,
  info: () => undefined,
  warn: () => undefined,
  error: () => undefined,
};

export function componentLogger(logger: Logger, component: string): Logger {
  return logger.child ? logger.child({ component }) : logger;
}
