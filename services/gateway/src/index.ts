import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createGatewayApp, type GatewayDeps } from './app';

export { gatewayConfigSpec } from './config';
export { createGatewayMetrics, type GatewayMetrics } from './metrics';
export {
  createTokenRegistry,
  parseTokens,
  scopes,
  type Scope,
  type TokenEntry,
} from './auth/tokens';
export { loadOrCreateLocalToken } from './auth/local-token';
export { isLoopback } from './auth/loopback';
export type { GatewayDeps } from './app';

export interface Gateway {
  listen(port: number, host: string): Promise<number>;
  /** Stops taking connections and waits for requests in flight (their confirms included). */
  close(): Promise<void>;
}

export function createGateway(deps: GatewayDeps): Gateway {
  const server = http.createServer(createGatewayApp(deps));
  // Slow-loris bounds: a client has this long to send headers and the whole request.
  server.headersTimeout = 10_000;
  server.requestTimeout = 60_000;
  return {
    listen: (port, host) =>
      new Promise((resolve, reject) => {
        server.once('error', reject);
        server.listen(port, host, () => resolve((server.address() as AddressInfo).port));
      }),
    close: () =>
      new Promise((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        server.closeIdleConnections();
      }),
  };
}
