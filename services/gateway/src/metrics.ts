import { Counter, Histogram, type Registry } from '@screenfleet/runtime';

/** Gateway metrics; labels are bounded (route templates, status codes, reasons), never devices. */
export function createGatewayMetrics(registry: Registry) {
  const registers = [registry];
  return {
    requests: new Counter({
      name: 'gateway_http_requests_total',
      help: 'HTTP requests by route, method and status',
      labelNames: ['route', 'method', 'status'] as const,
      registers,
    }),
    requestDuration: new Histogram({
      name: 'gateway_http_request_duration_seconds',
      help: 'HTTP request duration by route, method and status',
      labelNames: ['route', 'method', 'status'] as const,
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
      registers,
    }),
    rejects: new Counter({
      name: 'gateway_rejects_total',
      help: 'Refused requests by reason',
      labelNames: ['reason'] as const,
      registers,
    }),
    itemsAccepted: new Counter({
      name: 'gateway_items_accepted_total',
      help: 'Content items accepted (confirmed by the broker)',
      registers,
    }),
    batchSize: new Histogram({
      name: 'gateway_batch_items',
      help: 'Items per accepted batch',
      buckets: [0, 1, 5, 10, 25, 50, 100, 250, 500, 1000],
      registers,
    }),
    publishDuration: new Histogram({
      name: 'gateway_publish_duration_seconds',
      help: 'Time from publish to broker confirm',
      buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 5],
      registers,
    }),
  };
}

export type GatewayMetrics = ReturnType<typeof createGatewayMetrics>;
