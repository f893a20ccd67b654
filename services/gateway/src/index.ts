export { gatewayConfigSpec } from './config';
export {
  createGatewayMetrics,
  type ArchiveMetrics,
  type GatewayMetrics,
  type OperatorMetrics,
  type SearchMetrics,
} from './metrics';
export {
  createTokenRegistry,
  parseTokens,
  scopes,
  type Scope,
  type TokenEntry,
} from './auth/tokens';
export { loadOrCreateLocalToken, localTokenBanner, type LocalToken } from './auth/local-token';
export { resolveAuth, type AuthSetup } from './auth/auth-setup';
export {
  createRateLimits,
  parseRateLimits,
  routeClasses,
  type RateLimits,
  type RouteClass,
} from './auth/rate-limits';
export type { RateRule } from './auth/rate-limiter';
export type { GatewayDeps } from './app';
export { createGateway, type Gateway } from './gateway';
export { gatewayService } from './start';
