/**
 * RabbitMQ names and topology, as data. The bus adapter asserts this on every channel
 * (re)open, so a broker that lost its definitions gets them back before the first publish.
 */

export interface ExchangeSpec {
  name: string;
  type: 'topic' | 'direct' | 'fanout';
}

export interface QueueSpec {
  name: string;
  /** Queue arguments (x-queue-type, x-delivery-limit, ...); re-declaring with others fails. */
  arguments: Record<string, unknown>;
}

export interface BindingSpec {
  queue: string;
  exchange: string;
  routingKey: string;
}

export interface Topology {
  exchanges: ExchangeSpec[];
  queues: QueueSpec[];
  bindings: BindingSpec[];
}

export const exchangeNames = {
  capture: 'capture',
  captureDead: 'capture.dead',
  operator: 'operator',
  operatorPresence: 'operator.presence',
  /** tokens.changed events (ADR 0019): every gateway reads every one from its stream. */
  tokensEvents: 'tokens.events',
  /** Audited facts the gateway publishes (ADR 0019). */
  audit: 'audit',
} as const;

export const queueNames = {
  // v2: at-least-once dead-lettering (arguments a declared queue cannot change, hence a new
  // name). Workers move what is left in the old queue over at start (legacyQueueNames).
  ingestContent: 'ingest.content.v2',
  ingestContentDead: 'ingest.content.dead',
  // v2: quorum queues (were durable classic ones, which live on one node: with that node down
  // the broker refuses every re-declaration, so no process could reconnect to a cluster). The
  // v1 queues are left to the operator to delete (docs/deploy.md); requests in them expired.
  archiveRpc: 'archive.rpc.v2',
  searchRpc: 'search.rpc.v2',
  operatorPresence: 'operator.presence',
  /** Token administration and the gateways' snapshots, served by the ingest workers (ADR 0019). */
  tokensRpc: 'tokens.rpc.v1',
  tokensEvents: 'tokens.events',
  /** Audit rows to write, consumed by the ingest workers. */
  audit: 'audit.v1',
} as const;

/**
 * The queue an operator agent takes its device's commands from: named after the device and
 * exclusive to the agent's connection, so a second agent for the same device is refused (the
 * broker answers RESOURCE_LOCKED) instead of sharing its commands. Prefixed with the operator
 * exchange's name: a topology with its own exchange (a test) has its own device queues. At most
 * 8 + 8 + maxDeviceNameBytes (200) bytes, under AMQP's 255.
 */
export function deviceQueueName(device: string, operatorExchange: string = exchangeNames.operator) {
  return `${operatorExchange}.device.${device}`;
}

/** Queues of earlier versions, emptied into the capture exchange and deleted by the worker. */
export const legacyQueueNames = {
  ingestContent: 'ingest.content',
} as const;

/** After this many failed deliveries a content batch goes to ingest.content.dead. */
export const INGEST_DELIVERY_LIMIT = 10;

export const routingKeys = {
  contentBatch: (contentType: string) => `content.${contentType}`,
} as const;

export const topology: Topology = {
  exchanges: [
    { name: exchangeNames.capture, type: 'topic' },
    { name: exchangeNames.captureDead, type: 'fanout' },
    { name: exchangeNames.operator, type: 'direct' },
    { name: exchangeNames.operatorPresence, type: 'fanout' },
    { name: exchangeNames.tokensEvents, type: 'fanout' },
    { name: exchangeNames.audit, type: 'fanout' },
  ],
  // Every shared queue is replicated: quorum queues (or a stream). On a cluster the broker gives
  // each one replicas on three nodes (RabbitMQ's default group size, quorum_cluster_size = 3,
  // capped at the cluster's size); a confirm then means a majority holds the message. We do not
  // declare x-quorum-initial-group-size: it would say the same, and an argument a queue was not
  // declared with makes every re-declaration fail (406) on existing deployments (docs/deploy.md).
  queues: [
    {
      name: queueNames.ingestContent,
      arguments: {
        'x-queue-type': 'quorum',
        'x-delivery-limit': INGEST_DELIVERY_LIMIT,
        'x-dead-letter-exchange': exchangeNames.captureDead,
        // The broker keeps a dead letter until ingest.content.dead confirmed it (the default,
        // at-most-once, drops it if that queue cannot take it); requires reject-publish.
        'x-dead-letter-strategy': 'at-least-once',
        'x-overflow': 'reject-publish',
      },
    },
    { name: queueNames.ingestContentDead, arguments: { 'x-queue-type': 'quorum' } },
    // Archive commands, expiring per message (worthless once the caller gave up). Quorum, so
    // that losing a node costs an election (a second or so), not the queue until it is back.
    { name: queueNames.archiveRpc, arguments: { 'x-queue-type': 'quorum' } },
    // Searches, served by the ingest workers (they own the content store): the same reasoning.
    { name: queueNames.searchRpc, arguments: { 'x-queue-type': 'quorum' } },
    // Agents' heartbeats. A stream, not a queue: every gateway reads every heartbeat (consumers
    // do not compete), with no per-gateway queue to declare; old entries age out.
    {
      name: queueNames.operatorPresence,
      arguments: {
        'x-queue-type': 'stream',
        'x-max-age': '5m',
        'x-max-length-bytes': 50_000_000,
      },
    },
    // Token administration and the gateways' snapshots: as search.rpc.
    { name: queueNames.tokensRpc, arguments: { 'x-queue-type': 'quorum' } },
    // tokens.changed: a stream for the presence stream's reason (every gateway reads every
    // event, no queue per gateway). An event is worth something for a second; a gateway that
    // was away loads a snapshot on its reconnect anyway.
    {
      name: queueNames.tokensEvents,
      arguments: { 'x-queue-type': 'stream', 'x-max-age': '1m', 'x-max-length-bytes': 10_000_000 },
    },
    // Audit rows on their way to the store: held until a worker wrote them.
    { name: queueNames.audit, arguments: { 'x-queue-type': 'quorum' } },
  ],
  bindings: [
    { queue: queueNames.ingestContent, exchange: exchangeNames.capture, routingKey: 'content.#' },
    { queue: queueNames.ingestContentDead, exchange: exchangeNames.captureDead, routingKey: '' },
    {
      queue: queueNames.operatorPresence,
      exchange: exchangeNames.operatorPresence,
      routingKey: '',
    },
    { queue: queueNames.tokensEvents, exchange: exchangeNames.tokensEvents, routingKey: '' },
    { queue: queueNames.audit, exchange: exchangeNames.audit, routingKey: '' },
  ],
};

/**
 * What an operator agent declares: only the two exchanges it uses. Agents run on every desktop,
 * so their broker user is the most exposed one; declaring the shared queues would need
 * permissions on them (docs/broker-users.md). The gateway and the workers declare the rest.
 */
export const agentTopology: Topology = {
  exchanges: topology.exchanges.filter(
    (e) => e.name === exchangeNames.operator || e.name === exchangeNames.operatorPresence,
  ),
  queues: [],
  bindings: [],
};
