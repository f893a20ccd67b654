export { agentConfigSpec } from './config';
export { unavailableDesktop } from './domain/unavailable-desktop';
export { SnapshotStore, type Snapshot } from './domain/snapshots';
export { CommandGuard, MAX_CLOCK_SKEW_MS } from './domain/command-guard';
export { commandDeadline, systemClock, type AgentClock } from './domain/deadline';
export * from './desktop';
export { createOperatorAgent, type OperatorAgent, type OperatorAgentDeps } from './operator-agent';
export { operatorAgentService } from './start';
