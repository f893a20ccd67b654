import type { Registry } from 'prom-client';
import { loadConfig, type Config, type ConfigSpec, type Env } from './config';
import { createLogger, type Logger, type LogLevel } from './logger';
import { createMetrics } from './metrics';
import { startOpsServer, type OpsServer, type Readiness } from './ops-server';
import { runMain } from './run-main';
import {
  onShutdown,
  runShutdown,
  type Exit,
  type ShutdownOptions,
  type ShutdownStep,
  type SignalSource,
} from './shutdown';

/**
 * What undoes the start, step by step: each step is added right after the thing it stops has
 * started, and they run last-started first (stop intake, finish what is in hand, close
 * connections), whatever the process hosts: one service or several.
 */
export class StopSteps {
  private readonly added: ShutdownStep[] = [];

  add(name: string, run: () => Promise<void>): void {
    this.added.push({ name, run });
  }

  /** The steps in reverse order of adding. */
  inStopOrder(): ShutdownStep[] {
    return [...this.added].reverse();
  }
}

/** The variables of serviceConfigSpec the host itself reads. */
export interface HostedConfig {
  readonly logLevel: LogLevel;
  readonly opsPort: number;
  readonly opsHost: string;
  readonly metricsToken: string | undefined;
  readonly shutdownTimeout: number;
}

/** What the host gives what it starts: the process's one logger, registry and stop order. */
export interface HostContext {
  logger: Logger;
  registry: Registry;
  /** Adds what stops the part just started (see StopSteps); run on SIGTERM/SIGINT. */
  onStop: (name: string, run: () => Promise<void>) => void;
}

/** What a service's start gets from its host. */
export interface ServiceContext<C> extends HostContext {
  config: C;
}

/** What the host needs back once what it started runs. */
export interface StartedService {
  /** Asked on every GET /readyz. */
  readiness: () => Promise<Readiness> | Readiness;
  /** Called once the ops server listens, e.g. for a start line naming its port. */
  announce?: (ops: { port: number }) => void;
}

/** Tests only: the environment, the exit and the signal source. */
export interface ServiceHostOptions {
  env?: Env;
  exit?: Exit;
  source?: SignalSource;
}

export interface HostOptions extends Pick<ShutdownOptions, 'exit' | 'source' | 'repeatedSignal'> {
  /** Names the process in its log lines. */
  name: string;
  config: HostedConfig;
}

/**
 * The one host of a process, whether it runs one service (runService) or several (the embedded
 * mode): the logger, the metrics registry, then `start` (which adds its stop steps), then the ops
 * server with the readiness `start` returned. SIGTERM/SIGINT run the stop steps in reverse order
 * and close the ops server last, so probes and scrapes answer until the end. When the start
 * fails, the steps added so far run, then it rejects, for the caller to say so in one line and
 * exit 1.
 */
export async function hostProcess(
  options: HostOptions,
  start: (host: HostContext) => Promise<StartedService>,
): Promise<void> {
  const { config } = options;
  const logger = createLogger({ service: options.name, level: config.logLevel });
  const registry = createMetrics();
  const steps = new StopSteps();
  let started: StartedService;
  let ops: OpsServer;
  try {
    started = await start({ logger, registry, onStop: (name, run) => steps.add(name, run) });
    ops = await startOpsServer({
      port: config.opsPort,
      host: config.opsHost,
      metricsToken: config.metricsToken,
      registry,
      logger,
      readiness: started.readiness,
    });
  } catch (error) {
    // What started before the failure stops as it would on a signal (an archive pass holding
    // its lease, the SQLite file, requests in flight): the start's error is the one to report.
    const log = logger.child({ component: 'shutdown' }); // as onShutdown logs its steps
    await runShutdown(log, steps.inStopOrder(), { timeoutMs: config.shutdownTimeout });
    throw error;
  }
  started.announce?.({ port: ops.port });
  onShutdown(
    logger,
    [...steps.inStopOrder(), { name: 'close the ops server', run: () => ops.close() }],
    {
      timeoutMs: config.shutdownTimeout,
      ...(options.exit ? { exit: options.exit } : {}),
      ...(options.source ? { source: options.source } : {}),
      ...(options.repeatedSignal ? { repeatedSignal: options.repeatedSignal } : {}),
    },
  );
}

/**
 * A service process around its own start (hostProcess) with its config parsed from the spec;
 * a start failure exits 1 with one line (runMain). The spec must spread serviceConfigSpec (the
 * variables HostedConfig names). `service` names the process in its logs and in a start failure.
 */
export function runService<S extends ConfigSpec>(
  service: string,
  spec: S & (Config<S> extends HostedConfig ? unknown : never),
  start: (host: ServiceContext<Config<S>>) => Promise<StartedService>,
  options: ServiceHostOptions = {},
): Promise<void> {
  const exit = options.exit ? { exit: options.exit } : {};
  return runMain(
    async () => {
      const config = loadConfig(spec, options.env);
      await hostProcess(
        {
          name: service,
          config: config as Config<S> & HostedConfig,
          ...exit,
          ...(options.source ? { source: options.source } : {}),
        },
        (host) => start({ ...host, config }),
      );
    },
    { service, ...exit },
  );
}

/**
 * A readiness answer from named checks: `true` is up, `false` down, a string down for that
 * reason. Ready when every check is up.
 */
export function readinessOf(checks: Record<string, boolean | string>): Readiness {
  const entries = Object.entries(checks);
  return {
    ready: entries.every(([, check]) => check === true),
    checks: Object.fromEntries(
      entries.map(([name, check]) => [
        name,
        check === true ? 'up' : check === false ? 'down' : `down: ${check}`,
      ]),
    ),
  };
}
