/**
 * POST /add under faults, counted the way Jepsen counts a queue: every batch is sent once and
 * its answer classified (accepted = 200, refused = 503, unknown = 500 outcome_unknown or no
 * answer), then what the store holds is checked against that history: nothing accepted lost,
 * nothing stored twice, nothing refused stored, nothing stored that was never sent.
 */
import type { Collection } from 'mongodb';
import { buildBatch } from './content';
import { post } from './gateway';

export type Answer = 'accepted' | 'refused' | 'unknown' | 'unexpected';

export interface TargetGateway {
  name: string;
  url: string;
}

export interface SentBatch {
  gateway: string;
  device: string;
  body: ReturnType<typeof buildBatch>;
  sentAt: number;
  answeredAt: number;
  answer: Answer;
  /** `<status> <code>`, or the client's error for no answer. */
  detail: string;
}

/** How long a client waits for POST /add: past the gateway's publish timeout (5 s). */
const REQUEST_TIMEOUT_MS = 10_000;

/** Posts one batch once and records how it was answered. */
export async function sendOnce(
  gateway: TargetGateway,
  body: ReturnType<typeof buildBatch>,
): Promise<SentBatch> {
  const sentAt = Date.now();
  const { answer, detail } = await post(
    `${gateway.url}/add`,
    body,
    undefined,
    {},
    {
      signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
    },
  ).then(
    (response) => {
      const code = typeof response.body.code === 'string' ? response.body.code : '';
      return { answer: classify(response.status, code), detail: `${response.status} ${code}` };
    },
    (error: unknown) => ({
      answer: 'unknown' as const,
      detail: error instanceof Error ? error.message : String(error),
    }),
  );
  return {
    gateway: gateway.name,
    device: body.device_name,
    body,
    sentAt,
    answeredAt: Date.now(),
    answer,
    detail,
  };
}

/** What POST /add's answer says about the batch (README, "Decisions where the spec is silent"). */
export function classify(status: number, code: string): Answer {
  if (status === 200) return 'accepted';
  // "A 503 means nothing of the batch was stored."
  if (status === 503) return 'refused';
  // "The batch may be stored, and sending it again is safe."
  if (status === 500 && code === 'outcome_unknown') return 'unknown';
  return 'unexpected';
}

export interface LoadOptions {
  gateways: TargetGateway[];
  /** Devices, hence batch streams, per gateway; each sends one batch at a time. */
  lanesPerGateway: number;
  itemsPerBatch: number;
  /** Pause between two batches of a lane: bounds the rate (the store is the bottleneck). */
  paceMs: number;
  /** Names this load's devices, so its items are told apart from any other load's. */
  label: string;
  /** Checked after every answer: true ends the load. */
  done: (history: readonly SentBatch[]) => boolean;
  /** Bounds in time and requests, whatever `done` says. */
  maxMs: number;
  maxBatchesPerLane: number;
}

/** Runs the producers until `done` holds (or a bound is reached) and returns every batch sent. */
export async function runLoad(options: LoadOptions): Promise<SentBatch[]> {
  const history: SentBatch[] = [];
  const deadline = Date.now() + options.maxMs;
  let finished = false;
  const lane = async (gateway: TargetGateway, laneIndex: number) => {
    const device = `${options.label}-${gateway.name}-${laneIndex}`;
    for (let n = 0; n < options.maxBatchesPerLane && !finished; n++) {
      const body = buildBatch(device, n * options.itemsPerBatch, options.itemsPerBatch);
      history.push(await sendOnce(gateway, body));
      if (options.done(history) || Date.now() > deadline) finished = true;
      else await new Promise((resolve) => setTimeout(resolve, options.paceMs));
    }
  };
  await Promise.all(
    options.gateways.flatMap((gateway) =>
      Array.from({ length: options.lanesPerGateway }, (_, i) => lane(gateway, i)),
    ),
  );
  return history;
}

/** A stored or sent item's identity: what its deterministic _id is derived from. */
const itemKey = (device: string, filePath: string, timestamp: string | Date) =>
  `${device}|${filePath}|${new Date(timestamp).getTime()}`;

const keysOf = (batch: SentBatch) =>
  batch.body.content.data.map((item) => itemKey(batch.device, item.file_path, item.timestamp));

/** How many documents the store holds per item identity, for the given devices. */
export async function storedCounts(
  items: Collection<Record<string, unknown>>,
  devices: readonly string[],
): Promise<Map<string, number>> {
  const counts = new Map<string, number>();
  const cursor = items.find(
    { device_name: { $in: [...devices] } },
    { projection: { device_name: 1, file_path: 1, timestamp: 1 } },
  );
  for await (const doc of cursor) {
    const key = itemKey(String(doc.device_name), String(doc.file_path), doc.timestamp as Date);
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return counts;
}

export interface Accounting {
  /** Batches by answer. */
  batches: Record<Answer, number>;
  /** Items by answer, then what the store shows. */
  accepted: number;
  refused: number;
  unknown: number;
  stored: number;
  /** Accepted and not stored. */
  lost: number;
  /** Stored more than once. */
  duplicated: number;
  /** Refused (503) and stored anyway. */
  refusedStored: number;
  /** Unknown and stored (either is allowed). */
  unknownStored: number;
  /** Stored and never sent. */
  strangers: number;
}

/** The history checked against the store's counts. */
export function account(history: readonly SentBatch[], stored: Map<string, number>): Accounting {
  const batches: Record<Answer, number> = { accepted: 0, refused: 0, unknown: 0, unexpected: 0 };
  const sent = new Set<string>();
  const result = {
    accepted: 0,
    refused: 0,
    unknown: 0,
    lost: 0,
    refusedStored: 0,
    unknownStored: 0,
  };
  for (const batch of history) {
    batches[batch.answer] += 1;
    for (const key of keysOf(batch)) {
      sent.add(key);
      const isStored = (stored.get(key) ?? 0) > 0;
      if (batch.answer === 'accepted') {
        result.accepted += 1;
        if (!isStored) result.lost += 1;
      } else if (batch.answer === 'refused') {
        result.refused += 1;
        if (isStored) result.refusedStored += 1;
      } else {
        result.unknown += 1;
        if (isStored) result.unknownStored += 1;
      }
    }
  }
  const storedKeys = [...stored.keys()];
  return {
    batches,
    ...result,
    stored: storedKeys.length,
    duplicated: [...stored.values()].filter((count) => count > 1).length,
    strangers: storedKeys.filter((key) => !sent.has(key)).length,
  };
}

/** When each gateway's producers were back: the first 200 to a batch sent at or after `since`. */
export function recoveryMs(
  history: readonly SentBatch[],
  gateway: string,
  since: number,
): number | undefined {
  const first = history
    .filter((b) => b.gateway === gateway && b.sentAt >= since && b.answer === 'accepted')
    .sort((a, b) => a.answeredAt - b.answeredAt)[0];
  return first && first.answeredAt - since;
}

/**
 * Sends batches again until each gets a 200, as a client does after any other answer: what a
 * 503, a 500 outcome_unknown or a lost answer left behind must end up stored exactly once.
 */
export async function resendUntilAccepted(
  bodies: ReadonlyArray<ReturnType<typeof buildBatch>>,
  gateways: readonly TargetGateway[],
  timeoutMs: number,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let turn = 0;
  for (const body of bodies) {
    for (;;) {
      // Round the gateways, as a client behind a load balancer would land.
      const gateway = gateways[turn++ % gateways.length]!;
      const again = await sendOnce(gateway, body);
      if (again.answer === 'accepted') break;
      if (again.answer === 'unexpected' || Date.now() > deadline)
        throw new Error(`re-sending a batch of ${body.device_name} answered ${again.detail}`);
      // A client's pause before trying again, not a wait for something.
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }
}
