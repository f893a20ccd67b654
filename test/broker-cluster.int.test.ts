/**
 * The distributed system on a real three-node RabbitMQ cluster (test/services
 * startBrokerCluster), nodes killed with SIGKILL under load from two gateways and two ingest
 * workers on different nodes. POST /add is counted the way Jepsen counts a queue
 * (support/ingest-history.ts): every batch sent once, then accepted (200) must be stored, refused
 * (503) must not be, unknown (500 outcome_unknown, no answer) may be; nothing stored twice. Then
 * everything not accepted is sent again, as a client would, and must end up stored exactly once.
 * Figures (start, failover, counts, each process's broker log after each kill) go to
 * test-output/broker-cluster.json, and a line a run to test-output/broker-cluster.jsonl.
 */
import { appendFileSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { MongoClient, type Collection } from 'mongodb';
import { createAmqpBus, type Bus } from '@screenfleet/bus';
import {
  agentTopology,
  BrokerUnavailableError,
  queueNames,
  validators,
} from '@screenfleet/contracts';
import {
  createOperatorAgent,
  type KeyName,
  type ModifierName,
  type OperatorAgent,
} from '@screenfleet/operator-agent';
import { createLogger, createMetrics, waitFor } from '@screenfleet/runtime';
import {
  databaseName,
  mongoUrl,
  startBrokerCluster,
  uniqueName,
  type BrokerCluster,
} from './services';
import { freeFixedPort, type RabbitNode } from './services/rabbitmq-node';
import { numberFields, statusFields } from './support/archive-status';
import {
  startClusterSystem,
  type ClusterSystem,
  type PlacedGateway,
} from './support/cluster-system';
import { buildBatch } from './support/content';
import { fakeDesktop } from './support/fake-desktop';
import { get, operatorKeys, post } from './support/gateway';
import {
  account,
  recoveryMs,
  resendUntilAccepted,
  runLoad,
  storedCounts,
  type Accounting,
  type SentBatch,
} from './support/ingest-history';

// A cap, not the expected time (30-60 s a test): a test waits for each thing with its own deadline.
jest.setTimeout(180_000);

/** How soon producers, and archive status, must be answered 200 again after a node is killed. */
const RECOVERY_LIMIT_MS = 15_000;
/** The gateways' GATEWAY_OPERATOR_TIMEOUT (its default): no press may land later than this. */
const PRESS_TIMEOUT_MS = 5000;
const LIST = '/experimental/operator/list-interactable-elements';
const PRESS = '/experimental/operator/press-key-by-index';

/** A producer's pace between two requests: never a wait for something to happen. */
const pace = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** One answer of GET /archive/status or GET /search, as a poller saw it. */
interface Poll {
  what: 'status' | 'search';
  gateway: string;
  at: number;
  ms: number;
  status: number;
  body: Record<string, unknown>;
}

/** A press sent through a gateway, and how it was answered. */
interface SentPress {
  element: string;
  key: string;
  sentAt: number;
  status: number;
  code: string;
}

/**
 * The presses whose fate contradicts their answer: performed twice, performed later than the
 * gateway's timeout after sending (late), answered 200 and not performed exactly once, answered
 * 404 or 503 (the agent never had it) and performed, or answered anything but those, 504 and 500
 * outcome_unknown (which may go either way).
 */
function wrongPresses(
  presses: readonly SentPress[],
  performed: ReadonlyArray<{ element: string; key: string; at: number }>,
): SentPress[] {
  return presses.filter((p) => {
    const done = performed.filter((q) => q.element === p.element && q.key === p.key);
    if (done.length > 1) return true;
    if (done.some((q) => q.at - p.sentAt > PRESS_TIMEOUT_MS)) return true;
    if (p.status === 200) return done.length !== 1;
    if (p.status === 404 || p.status === 503) return done.length !== 0;
    return !(p.status === 504 || (p.status === 500 && p.code === 'outcome_unknown'));
  });
}

/**
 * The status and search answers that are wrong: anything but a 200 or a 503 with a code and a
 * message; a status without every field of the spec or with a number field that is not a number;
 * a search answer off its contract, or holding an item of another device or one never sent.
 */
function wrongAnswers(polls: readonly Poll[], searched: string, sentKeys: Set<string>): Poll[] {
  return polls.filter((p) => {
    if (p.status === 503) return typeof p.body.code !== 'string' || !p.body.message;
    if (p.status !== 200) return true;
    if (p.what === 'status')
      return (
        Object.keys(p.body).sort().join() !== [...statusFields].sort().join() ||
        numberFields.some((field) => typeof p.body[field] !== 'number')
      );
    if (validators.searchAnswer.check(structuredClone(p.body)).length > 0) return true;
    const data = p.body.data as Array<{
      content: { device_name: string; file_path: string; timestamp: string };
    }>;
    return data.some(
      ({ content }) =>
        content.device_name !== searched ||
        !sentKeys.has(`${content.file_path}|${Date.parse(content.timestamp)}`),
    );
  });
}

function countBy<T>(list: readonly T[], key: (item: T) => string): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const item of list) counts[key(item)] = (counts[key(item)] ?? 0) + 1;
  return counts;
}

describe('the system on a three-node RabbitMQ cluster, nodes killed with SIGKILL under load', () => {
  let cluster: BrokerCluster;
  let system: ClusterSystem;
  let client: MongoClient;
  let items: Collection<Record<string, unknown>>;
  let agentBus: Bus | undefined;
  let agent: OperatorAgent | undefined;
  const database = databaseName('cluster');
  const device = uniqueName('cluster-desk');
  const agentConnection = uniqueName('agent');
  const fake = fakeDesktop();
  /** When each press was performed on the fake desktop. */
  const performed: Array<{ element: string; key: KeyName; at: number }> = [];
  const figures: Record<string, unknown> = {};
  /** The node a test killed: brought back before the next test, whatever the outcome. */
  let killed: RabbitNode | undefined;

  beforeAll(async () => {
    const started = Date.now();
    cluster = await startBrokerCluster();
    figures.cluster_start_ms = Date.now() - started;
    const systemStarted = Date.now();
    system = await startClusterSystem(cluster, database, {
      // The first ingest worker declares the queues: their leaders start on node 0.
      ingestWorkers: [
        [0, 1, 2],
        [1, 0, 2],
      ],
      archiveWorker: [2, 0, 1],
      gateways: [
        [1, 0, 2],
        [2, 1, 0],
      ],
    });
    figures.system_start_ms = Date.now() - systemStarted;
    client = await MongoClient.connect(mongoUrl());
    items = client.db(database).collection('content_items');
  }, 180_000);

  // Before the next test rather than after this one: the last kill needs no restart.
  beforeEach(async () => {
    if (!killed) return;
    const node = killed;
    killed = undefined;
    await restore(node);
  });

  afterAll(async () => {
    await agent?.stop();
    await agentBus?.close();
    await system?.stop();
    await cluster?.stop();
    await client?.db(database).dropDatabase();
    await client?.close();
    const out = path.join(__dirname, '..', 'test-output');
    mkdirSync(out, { recursive: true });
    writeFileSync(path.join(out, 'broker-cluster.json'), JSON.stringify(figures, null, 2) + '\n');
    // One line a run, kept across runs (npm run test:repeat).
    appendFileSync(path.join(out, 'broker-cluster.jsonl'), JSON.stringify(figures) + '\n');
    process.stdout.write(`broker cluster figures: ${JSON.stringify(figures)}\n`);
  });

  // ---- helpers over this file's system -------------------------------------------------------

  /** An operator agent in this process on a fake desktop that notes when it pressed. */
  async function startAgent(nodes: RabbitNode[]): Promise<Bus> {
    const bus = await createAmqpBus({
      url: nodes.map((node) => node.url),
      nodeOrder: 'listed',
      topology: agentTopology,
      connectionName: agentConnection,
      reconnect: { initialMs: 100, maxMs: 1000 },
      logger: createLogger({ service: 'operator-agent', level: 'silent' }),
    });
    agentBus = bus;
    const timedDesktop = {
      ...fake.desktop,
      async pressKey(key: KeyName, modifiers: ModifierName[]) {
        await fake.desktop.pressKey(key, modifiers);
        performed.push({ element: fake.presses.at(-1)?.element ?? '', key, at: Date.now() });
      },
    };
    agent = createOperatorAgent({
      bus,
      desktop: timedDesktop,
      deviceName: device,
      commandKey: operatorKeys.publicKey,
      snapshotTtlMs: 120_000,
      logger: createLogger({ service: 'operator-agent', level: 'silent' }),
      registry: createMetrics(),
    });
    await agent.start();
    return bus;
  }

  /**
   * The agent's node list: first a node no gateway is on (with two gateways on three nodes
   * there is one), then the others without a gateway, then the gateways' nodes. Before and after
   * its node dies, some gateway is then on another node than the agent.
   */
  async function agentNodes(): Promise<RabbitNode[]> {
    const connected = await cluster.connections();
    const gatewayNodes = new Set(system.gateways.map((g) => connected.get(g.connectionName)!));
    const free = cluster.nodes.filter((node) => !gatewayNodes.has(node));
    return [...free, ...gatewayNodes];
  }

  const nodeOf = (connectionName: string) => cluster.nodeOfConnection(connectionName);
  /** How a process's log names a node: no user, no password. */
  const labelOf = (node: RabbitNode) => `amqp://127.0.0.1:${node.spec.port}`;

  /** Posts batches from both gateways, kills (via `fault`) once each had a few accepted. */
  async function underLoad(label: string, fault: () => Promise<void>) {
    let killedAt: number | undefined;
    let faultDone: Promise<void> | undefined;
    const acceptedSince = (history: readonly SentBatch[], gateway: string, since: number) =>
      history.filter((b) => b.gateway === gateway && b.sentAt >= since && b.answer === 'accepted')
        .length;
    const history = await runLoad({
      gateways: system.gateways,
      // Six batches in flight at most: enough that some are unconfirmed when a node dies,
      // few enough that the store drains them in seconds.
      lanesPerGateway: 3,
      itemsPerBatch: 10,
      paceMs: 100,
      label,
      maxMs: 60_000,
      maxBatchesPerLane: 300,
      done: (sent) => {
        const everyone = (since: number, n: number) =>
          system.gateways.every((g) => acceptedSince(sent, g.name, since) >= n);
        if (killedAt === undefined && everyone(0, 10)) {
          killedAt = Date.now();
          faultDone = fault();
        }
        // Each gateway's producers answered 200 again, twenty times, and the load went on
        // for a few seconds past the kill: they recovered and stay recovered.
        return killedAt !== undefined && Date.now() - killedAt >= 3000 && everyone(killedAt, 20);
      },
    });
    if (!faultDone || killedAt === undefined) throw new Error(`${label}: the fault never ran`);
    await faultDone;
    const since = killedAt;
    // Recorded before any assertion, so a failed run still tells what happened.
    figures[label] = {
      answers_after_kill: countBy(
        history.filter((b) => b.sentAt >= since),
        (b) => `${b.gateway} ${b.detail}`,
      ),
      broker_log: brokerLogSince(since),
    };
    return { history, killedAt };
  }

  /** Each process's broker connection events since `since`: what a failed run needs to tell. */
  function brokerLogSince(since: number): Record<string, string[]> {
    const log: Record<string, string[]> = {};
    for (const placed of system.all) {
      const lines = placed.process.lines
        .filter((l) => Date.parse(String(l.time)) >= since)
        .filter((l) => /broker|channel|reconnect/.test(String(l.msg)))
        .map((l) => {
          const err = (l.err as { message?: string } | undefined)?.message ?? '';
          const at = Date.parse(String(l.time)) - since;
          return `+${at} ms ${String(l.msg)} ${typeof l.node === 'string' ? l.node : ''} ${err}`;
        });
      if (lines.length > 0) log[placed.connectionName] = lines.slice(0, 20);
    }
    return log;
  }

  /**
   * Waits until nothing sent so far can still arrive: a marker batch through each gateway is
   * stored (each gateway's channel delivers in order), and the queue holds nothing.
   */
  async function settle(label: string): Promise<void> {
    const markers = system.gateways.map((gateway) => ({
      device: `${label}-marker-${gateway.name}`,
      gateway,
    }));
    for (const { device: marker, gateway } of markers)
      await resendUntilAccepted([buildBatch(marker, 0, 1)], [gateway], 30_000);
    await waitFor(
      async () =>
        (await items.countDocuments({ device_name: { $in: markers.map((m) => m.device) } })) ===
          markers.length && (await cluster.depth(queueNames.ingestContent)) === 0,
      {
        timeoutMs: 90_000,
        intervalMs: 250,
        what: `${label}: the markers stored and the queue empty`,
      },
    );
  }

  const devicesOf = (history: readonly SentBatch[]) => [...new Set(history.map((b) => b.device))];

  /**
   * The Jepsen check, then the client's re-send of everything not accepted (and of some
   * accepted batches): every item sent must end up stored exactly once.
   */
  async function checkHistory(label: string, history: SentBatch[]): Promise<Accounting> {
    await settle(label);
    const devices = devicesOf(history);
    const accounting = account(history, await storedCounts(items, devices));
    const unexpected = history.filter((b) => b.answer === 'unexpected').map((b) => b.detail);
    expect(unexpected).toEqual([]);
    expect(accounting).toMatchObject({ lost: 0, duplicated: 0, refusedStored: 0, strangers: 0 });
    expect(accounting.accepted).toBeGreaterThan(0);

    const again = [
      ...history.filter((b) => b.answer !== 'accepted'),
      ...history.filter((b) => b.answer === 'accepted').slice(0, 10),
    ];
    await resendUntilAccepted(
      again.map((b) => b.body),
      system.gateways,
      60_000,
    );
    await settle(`${label}-resent`);
    const afterResend = await storedCounts(items, devices);
    const sent = history.reduce((n, b) => n + b.body.content.data.length, 0);
    expect({
      stored: afterResend.size,
      duplicated: [...afterResend.values()].filter((count) => count > 1).length,
    }).toEqual({ stored: sent, duplicated: 0 });
    expect(await cluster.depth(queueNames.ingestContentDead)).toBe(0);
    // Counted: out of the store, so later searches (which read every document on FerretDB)
    // stay quick.
    await items.deleteMany({ device_name: { $regex: `^${label}-` } });
    return accounting;
  }

  /** Each gateway's recovery after the kill, checked against the limit. */
  function expectRecovered(history: readonly SentBatch[], killedAt: number) {
    const recovery = Object.fromEntries(
      system.gateways.map((g) => [g.name, recoveryMs(history, g.name, killedAt)]),
    );
    for (const ms of Object.values(recovery)) expect(ms).toBeLessThan(RECOVERY_LIMIT_MS);
    return recovery;
  }

  /** kill -9 of a node, brought back after the test (afterEach). */
  async function kill(node: RabbitNode): Promise<void> {
    killed = node;
    await cluster.kill(node);
  }

  /** Kills a node and measures how long until `queue` has a leader on another node. */
  async function killAndTimeElection(node: RabbitNode, queue: string) {
    const killedAt = Date.now();
    await kill(node);
    await waitFor(
      async () => {
        const { leader } = await cluster.replicas(queue);
        return leader !== '' && leader !== node.name;
      },
      { timeoutMs: 30_000, intervalMs: 100, what: `a new leader of ${queue}` },
    );
    return Date.now() - killedAt;
  }

  /** Brings a killed node back and waits until every process and replica is connected again. */
  async function restore(node: RabbitNode): Promise<void> {
    await cluster.restart(node);
    // The presence stream too: a gateway consumes it, and a node without its replica running
    // refuses the consumer (406), which sends the gateway on to another node.
    const replicated = [
      queueNames.ingestContent,
      queueNames.archiveRpc,
      queueNames.searchRpc,
      queueNames.operatorPresence,
    ];
    await waitFor(
      async () => {
        const queues = await cluster.queues();
        return replicated.every((queue) => queues.get(queue)?.online.length === 3);
      },
      { timeoutMs: 30_000, intervalMs: 250, what: `every replica of ${replicated.join(', ')}` },
    );
    const names = system.all.map((p) => p.connectionName);
    if (agentBus) names.push(agentConnection);
    await waitFor(
      async () => {
        const connected = await cluster.connections();
        return names.every((name) => connected.has(name));
      },
      { timeoutMs: 30_000, intervalMs: 250, what: `${names.join(', ')} connected` },
    );
  }

  /** What the service processes warned about since `since`, each message with its count. */
  function warningsSince(since: number): Record<string, number> {
    const lines = system.all.flatMap((placed) =>
      placed.process.lines
        .filter(
          (l) =>
            Date.parse(String(l.time)) >= since &&
            ['warn', 'error', 'fatal'].includes(String(l.level)),
        )
        .map((l) => `${placed.service}: ${String(l.msg)}`),
    );
    return countBy(lines, (line) => line);
  }

  /** A gateway whose broker connection is on another node than `node`. */
  async function gatewayOffNode(node: RabbitNode): Promise<PlacedGateway> {
    const connected = await cluster.connections();
    const gateway = system.gateways.find((g) => connected.get(g.connectionName) !== node);
    if (!gateway) throw new Error(`every gateway is on ${node.name}`);
    return gateway;
  }

  // ---- the tests ------------------------------------------------------------------------------

  describe('a bus given a list of nodes', () => {
    it('when its first node does not answer, then it connects to the next; when none answers, the start fails naming each node without its password', async () => {
      const dead = [await freeFixedPort(new Set()), await freeFixedPort(new Set())].map(
        (port) => `amqp://guest:secret-pw@127.0.0.1:${port}`,
      );
      const connectionName = uniqueName('rotation');
      const bus = await createAmqpBus({
        url: [dead[0]!, cluster.nodes[1]!.url],
        nodeOrder: 'listed',
        topology: agentTopology,
        connectionName,
      });
      try {
        expect(await nodeOf(connectionName)).toBe(cluster.nodes[1]);
      } finally {
        await bus.close();
      }

      const failed = await createAmqpBus({
        url: dead,
        nodeOrder: 'listed',
        topology: agentTopology,
        connectionName,
      }).catch((error: unknown) => error);
      expect(failed).toBeInstanceOf(BrokerUnavailableError);
      const message = (failed as Error).message;
      for (const url of dead) expect(message).toContain(url.replace('guest:secret-pw@', ''));
      expect(message).not.toContain('secret-pw');
    });
  });

  it('when the node leading ingest.content.v2 is killed, then every 200 is stored exactly once, every 503 stored nothing, and producers recover within seconds', async () => {
    const leader = await cluster.leaderOf(queueNames.ingestContent);
    let electionMs = 0;
    const { history, killedAt } = await underLoad('s1', async () => {
      electionMs = await killAndTimeElection(leader, queueNames.ingestContent);
    });
    const recovery = expectRecovered(history, killedAt);
    const accounting = await checkHistory('s1', history);
    Object.assign(figures.s1 as object, {
      node: leader.name,
      election_ms: electionMs,
      recovery_ms: recovery,
      ...accounting,
    });
  });

  it('when the node a gateway is connected to is killed, then it tries the next node of its list and ends on a live one, says so in its log without credentials, and the same accounting holds', async () => {
    const gateway = system.gateways[0]!;
    const before = await nodeOf(gateway.connectionName);
    const next = gateway.nodes[(gateway.nodes.indexOf(before) + 1) % gateway.nodes.length]!;
    const seen = gateway.process.lines.length;
    const { history, killedAt } = await underLoad('s2', () => kill(before));

    const now = await nodeOf(gateway.connectionName);
    expect(now).not.toBe(before);
    // The log, in order: the loss of its node, the next node tried, the node it is on now.
    const lines = gateway.process.lines.slice(seen);
    const said = (msg: string) => lines.filter((l) => l.msg === msg).map((l) => l.node);
    expect(said('broker connection lost')).toEqual([labelOf(before)]);
    expect(said('reconnecting to the broker')[0]).toBe(labelOf(next));
    expect(said('connected to the broker').at(-1)).toBe(labelOf(now));
    expect(JSON.stringify(gateway.process.lines)).not.toContain('guest:guest');
    const recovery = expectRecovered(history, killedAt);
    const accounting = await checkHistory('s2', history);
    Object.assign(figures.s2 as object, {
      node: before.name,
      reconnected_to: now.name,
      attempts: said('reconnecting to the broker').length,
      failures: lines
        .filter((l) => /reconnect failed|cannot reopen|channel closed/.test(String(l.msg)))
        .map((l) => `${String(l.msg)}: ${JSON.stringify(l.err)}`),
      recovery_ms: recovery,
      ...accounting,
    });
  });

  it('when the node an operator agent is on is killed, then a press from a gateway on another node reaches the agent before and after, no press answered 404/503 is performed, and none lands late', async () => {
    const bus = await startAgent(await agentNodes());
    const agentNode = await nodeOf(agentConnection);
    const sender = await gatewayOffNode(agentNode);
    const listed = await post(sender.url + LIST, { app_name: 'FakeApp', device_name: device });
    expect(listed.status).toBe(200);
    const first = await post(sender.url + PRESS, {
      element_index: 1,
      key: 'a',
      device_name: device,
    });
    expect(first.status).toBe(200);
    expect(performed.map((p) => [p.element, p.key])).toEqual([['FakeApp field 1', 'a']]);

    // Presses all through the outage, each a distinct (element, key), from the surviving gateway.
    const letters = 'bcdefghijklmnopqrstuvwxyz';
    const presses: SentPress[] = [];
    let reconnectedAt: number | undefined;
    bus.events.once('connected', () => (reconnectedAt = Date.now()));
    const answeredSince = (since: number) =>
      presses.filter((p) => p.sentAt >= since && p.status === 200).length;
    // Each press a distinct (element, key): what the desktop performed tells which press it was.
    let pressed = 0;
    const press = async () => {
      const i = pressed++;
      const element = i % 5;
      const key = letters[Math.floor(i / 5) % letters.length]!;
      const sentAt = Date.now();
      const answer = await post(sender.url + PRESS, {
        element_index: element,
        key,
        device_name: device,
      }).then(
        (r) => ({ status: r.status, code: typeof r.body.code === 'string' ? r.body.code : '' }),
        (error: unknown) => ({ status: 0, code: String(error) }),
      );
      presses.push({ element: `FakeApp field ${element}`, key, sentAt, ...answer });
    };
    // Until three presses sent after the agent's reconnect were answered 200.
    let stopPressing = false;
    const presser = (async () => {
      while (!stopPressing && pressed < letters.length * 5 - 1) {
        if (reconnectedAt !== undefined && answeredSince(reconnectedAt) >= 3) return;
        await press();
        await pace(300);
      }
    })();
    let atKill: Promise<void> | undefined;
    const load = underLoad('s3', () => {
      // One press on its way while the node dies.
      atKill = press();
      return kill(agentNode);
    });
    // A failed load must not leave the presser running into the next test.
    load.catch(() => (stopPressing = true));
    const { history, killedAt } = await load;
    await Promise.all([presser, atKill]);
    expect(reconnectedAt).toBeDefined();

    const agentNow = await nodeOf(agentConnection);
    expect(agentNow).not.toBe(agentNode);
    const after = await gatewayOffNode(agentNow);
    await post(after.url + LIST, { app_name: 'FakeApp', device_name: device });
    const last = await post(after.url + PRESS, { element_index: 3, key: 'a', device_name: device });
    expect(last.status).toBe(200);
    expect(performed.at(-1)).toMatchObject({ element: 'FakeApp field 3', key: 'a' });

    expect(wrongPresses(presses, performed)).toEqual([]);
    const accounting = await checkHistory('s3', history);
    Object.assign(figures.s3 as object, {
      node: agentNode.name,
      agent_reconnected_to: agentNow.name,
      presses: countBy(presses, (p) => `${p.status} ${p.code}`.trim()),
      performed_during: presses.filter((p) =>
        performed.some((q) => q.element === p.element && q.key === p.key),
      ).length,
      agent_back_after_ms: reconnectedAt! - killedAt,
      recovery_ms: expectRecovered(history, killedAt),
      ...accounting,
    });
  });

  it('when the node leading archive.rpc.v2 is killed, then GET /archive/status and GET /search keep answering: 200 with a right answer or 503 with a reason, status 200 again within seconds, search once the load is over', async () => {
    const leader = await cluster.leaderOf(queueNames.archiveRpc);
    const searched = 's4-gwA-0';
    const polls: Poll[] = [];
    const stopPolling = new AbortController();
    /** One request, recorded; `stop` cuts it short (unrecorded) once polling ends. */
    const poll = async (what: Poll['what'], gateway: PlacedGateway, stop?: AbortSignal) => {
      const at = Date.now();
      const url =
        what === 'status'
          ? `${gateway.url}/archive/status`
          : `${gateway.url}/search?device_name=${searched}&limit=20`;
      const timeout = AbortSignal.timeout(15_000);
      const signal = stop ? AbortSignal.any([timeout, stop]) : timeout;
      const answer = await get(url, undefined, {}, { signal }).then(
        (r) => ({ status: r.status, body: r.body }),
        (error: unknown) => ({ status: 0, body: { error: String(error) } }),
      );
      const done = { what, gateway: gateway.name, at, ms: Date.now() - at, ...answer };
      if (!stop?.aborted) polls.push(done);
      return done;
    };
    // Both endpoints work through both gateways before anything is killed.
    for (const gateway of system.gateways)
      for (const what of ['status', 'search'] as const)
        await waitFor(async () => (await poll(what, gateway)).status === 200, {
          timeoutMs: 60_000,
          intervalMs: 500,
          what: `${what} through ${gateway.name} answered 200 before the kill`,
        });
    // One poller per gateway and endpoint, so a slow search does not space out status polls;
    // a search costs the store seconds here, so one a second per gateway is load enough.
    const pollers = system.gateways.flatMap((gateway) =>
      (['status', 'search'] as const).map(async (what) => {
        while (!stopPolling.signal.aborted) {
          await poll(what, gateway, stopPolling.signal);
          await pace(what === 'status' ? 200 : 1000);
        }
      }),
    );
    const firstAfter = (what: Poll['what'], since: number) =>
      Math.max(
        ...system.gateways.map((g) =>
          Math.min(
            ...polls
              .filter((p) => p.gateway === g.name && p.what === what && p.at >= since)
              .filter((p) => p.status === 200)
              .map((p) => p.at + p.ms - since),
          ),
        ),
      );
    let electionMs = 0;
    let killedAt = Infinity;
    let history: SentBatch[] = [];
    try {
      ({ history, killedAt } = await underLoad('s4', async () => {
        electionMs = await killAndTimeElection(leader, queueNames.archiveRpc);
      }));
      await waitFor(() => firstAfter('status', killedAt) < Infinity, {
        timeoutMs: RECOVERY_LIMIT_MS,
        what: 'archive status answered 200 through each gateway after the kill',
      });
    } finally {
      stopPolling.abort();
      await Promise.all(pollers);
      // Written before the assertions, so a failed run still tells what it saw.
      Object.assign((figures.s4 ??= {}), {
        node: leader.name,
        election_ms: electionMs,
        answers: countBy(polls, (p) =>
          `${p.what} ${p.status} ${typeof p.body.code === 'string' ? p.body.code : ''}`.trim(),
        ),
        reasons: [
          ...new Set(polls.filter((p) => p.status === 503).map((p) => String(p.body.message))),
        ],
        status_back_after_ms: firstAfter('status', killedAt),
        slowest_ms: {
          status: Math.max(...polls.filter((p) => p.what === 'status').map((p) => p.ms)),
          search: Math.max(...polls.filter((p) => p.what === 'search').map((p) => p.ms)),
        },
        warnings_since_kill: warningsSince(killedAt),
      });
    }
    // The store is not written to any more: each gateway answers a search (the ingest workers
    // serve search.rpc.v2 again).
    for (const gateway of system.gateways)
      await waitFor(async () => (await poll('search', gateway)).status === 200, {
        timeoutMs: 60_000,
        intervalMs: 500,
        what: () =>
          `a search through ${gateway.name} answered 200 (last: ${JSON.stringify(polls.at(-1))})`,
      });
    Object.assign(figures.s4 as object, {
      search_back_after_ms: firstAfter('search', killedAt),
    });

    const sentKeys = new Set(
      history
        .filter((b) => b.device === searched && b.answer !== 'refused')
        .flatMap((b) =>
          b.body.content.data.map((item) => `${item.file_path}|${Date.parse(item.timestamp)}`),
        ),
    );
    const wrong = wrongAnswers(polls, searched, sentKeys);
    expect(wrong.map((p) => ({ what: p.what, status: p.status, body: p.body }))).toEqual([]);
    expect(firstAfter('status', killedAt)).toBeLessThan(RECOVERY_LIMIT_MS);
    const recovery = expectRecovered(history, killedAt);
    const accounting = await checkHistory('s4', history);
    Object.assign(figures.s4 as object, { recovery_ms: recovery, ...accounting });
  });
});
