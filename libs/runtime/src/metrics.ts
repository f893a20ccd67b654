import { collectDefaultMetrics, Registry } from 'prom-client';

/**
 * The process's one registry, with the default process and Node.js metrics. A registry of our
 * own (not prom-client's global one) keeps tests and the embedded mode free of name clashes.
 */
export function createMetrics(): Registry {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  return registry;
}
