import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createGatewayApp, type GatewayDeps } from './app';
import { createOperatorPresence } from './domain/operator-presence';

export interface Gateway {
  listen(port: number, host: string): Promise<number>;
  /** Stops taking connections and waits for requests in flight (their confirms included). */
  close(): Promise<void>;
}

export function createGateway(deps: GatewayDeps): Gateway {
  const presence = createOperatorPresence({ bus: deps.bus, logger: deps.logger });
  deps.metrics.operator.countAgentsWith(() => presence.devices().length);
  const server = http.createServer(createGatewayApp(deps, presence));
  // Slow-loris bounds: a client has this long to send headers and the whole request.
  server.headersTimeout = 10_000;
  server.requestTimeout = 60_000;
  return {
    // Presence first, so a request naming no device finds the agents that announce themselves.
    listen: async (port, host) => {
      await presence.start();
      return new Promise((resolve, reject) => {
        server.once('error', reject);
        server.listen(port, host, () => resolve((server.address() as AddressInfo).port));
      });
    },
    close: async () => {
      await new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        server.closeIdleConnections();
      });
      await presence.stop();
    },
  };
}
