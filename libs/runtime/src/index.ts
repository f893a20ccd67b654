export {
  ConfigError,
  currentEnv,
  defineConfig,
  describeRule,
  loadConfig,
  renderConfigMarkdown,
  withoutDefault,
  type BooleanVar,
  type Config,
  type ConfigIssue,
  type ConfigSpec,
  type DurationVar,
  type Env,
  type EnumVar,
  type IntegerVar,
  type ListVar,
  type NumberVar,
  type StringVar,
  type UrlListVar,
  type UrlVar,
  type VarSpec,
} from './config';
export { createLogger, LOG_LEVELS, type Logger, type LoggerOptions, type LogLevel } from './logger';
export { createMetrics } from './metrics';
export {
  startOpsServer,
  type OpsServer,
  type OpsServerOptions,
  type Readiness,
} from './ops-server';
export {
  ensurePrivateDir,
  ensurePrivateFile,
  PRIVATE_DIR_MODE,
  PRIVATE_FILE_MODE,
} from './private-dir';
export { runMain, type RunMainOptions } from './run-main';
export {
  onShutdown,
  runShutdown,
  type Exit,
  type ShutdownOptions,
  type ShutdownStep,
  type SignalSource,
} from './shutdown';
// Services define their own metrics on the registry without depending on prom-client directly.
export { Counter, Gauge, Histogram, Registry } from 'prom-client';
export { backoffDelay, type BackoffOptions } from './backoff';
export {
  BROKER_NODE_ORDERS,
  SERVER_VARS,
  serviceConfigSpec,
  type BrokerNodeOrder,
  withoutServerVars,
  type ServerVar,
  type SettingsConfig,
} from './service-config';
export {
  hostProcess,
  readinessOf,
  runService,
  StopSteps,
  type HostContext,
  type HostedConfig,
  type HostOptions,
  type ServiceContext,
  type ServiceHostOptions,
  type StartedService,
} from './service-host';
export { waitFor, WaitTimeoutError, type WaitForOptions } from './wait-for';
