import type { KeyObject } from 'node:crypto';
import {
  AppError,
  createEnvelope,
  operatorTimings,
  resolvePressKey,
  signCommand,
  validators,
  type ListCommand,
  type ListElementsRequest,
  type ListElementsResponse,
  type OperationResult,
  type OperatorCommand,
  type OperatorResult,
  type ClickByIndexRequest,
  type ClickCommand,
  type PressCommand,
  type PressKeyRequest,
  type TypeByIndexRequest,
  type TypeCommand,
} from '@screenfleet/contracts';
import type { Bus } from '@screenfleet/bus';

/**
 * Sends one command to a device's agent and turns its answer back into the error it stood
 * for, so the gateway's one error mapping applies (409, 400, 503, 500 ...). The bus itself
 * rejects DeviceUnavailableError (no agent, 404) and TimeoutError (silent agent, 504).
 */
export async function sendOperatorCommand(
  bus: Pick<Bus, 'sendToDevice'>,
  device: string,
  command: OperatorCommand,
  options: { timeoutMs: number; requestId: string; signingKey?: KeyObject | undefined },
): Promise<OperatorResult> {
  const unsigned = createEnvelope('operator.command', command, {
    correlationId: options.requestId,
  });
  // Signed for this device only: agents run nothing else (operator-signing.ts).
  const envelope = options.signingKey
    ? signCommand(unsigned, device, options.signingKey)
    : unsigned;
  const reply = await bus.sendToDevice<unknown>(device, envelope, {
    timeoutMs: options.timeoutMs,
    expirationMs: operatorTimings(options.timeoutMs).expirationMs,
  });
  const result = validators.operatorResult.parse(reply.payload);
  if (!result.success) {
    throw new AppError(result.code ?? 'operation_failed', result.message, result.errors ?? []);
  }
  return result;
}

/** What every command carries: its deadline, the agent's budget within it, who asked. */
function commandBase(timeoutMs: number, requestedBy: string) {
  return {
    timeout_ms: timeoutMs,
    budget_ms: operatorTimings(timeoutMs).budgetMs,
    requested_by: requestedBy,
  };
}

/**
 * The element a press, click or type acts on: its index, and the listing it was read from
 * (cache_id pins it; without one the agent accepts only a listing made with the same token).
 */
function elementOf(request: { element_index: number; cache_id?: string | null | undefined }) {
  return {
    element_index: request.element_index,
    ...(request.cache_id != null ? { cache_id: request.cache_id } : {}),
  };
}

export function toListCommand(
  request: ListElementsRequest,
  timeoutMs: number,
  requestedBy: string,
): ListCommand {
  const command: ListCommand = {
    action: 'list',
    ...commandBase(timeoutMs, requestedBy),
    app_name: request.app_name,
  };
  if (request.window_name != null) command.window_name = request.window_name;
  if (request.with_text_only != null) command.with_text_only = request.with_text_only;
  if (request.interactable_only != null) command.interactable_only = request.interactable_only;
  if (request.include_sometimes_interactable != null)
    command.include_sometimes_interactable = request.include_sometimes_interactable;
  if (request.max_elements != null) command.max_elements = request.max_elements;
  return command;
}

/**
 * The agent's command for a press request, its key names resolved here, once (libs/contracts
 * keys.ts): the signed command carries canonical names and the agent resolves nothing.
 */
export function toPressCommand(
  request: PressKeyRequest,
  timeoutMs: number,
  requestedBy: string,
): PressCommand {
  const { key, modifiers } = resolvePressKey(request);
  return {
    action: 'press',
    ...commandBase(timeoutMs, requestedBy),
    ...elementOf(request),
    key,
    modifiers,
  };
}

/** The agent's command for a click request. */
export function toClickCommand(
  request: ClickByIndexRequest,
  timeoutMs: number,
  requestedBy: string,
): ClickCommand {
  return { action: 'click', ...commandBase(timeoutMs, requestedBy), ...elementOf(request) };
}

/** The agent's command for a type request: the text as sent. */
export function toTypeCommand(
  request: TypeByIndexRequest,
  timeoutMs: number,
  requestedBy: string,
): TypeCommand {
  return {
    action: 'type',
    ...commandBase(timeoutMs, requestedBy),
    ...elementOf(request),
    text: request.text,
  };
}

export function listingOf(result: OperatorResult): ListElementsResponse {
  if (!result.listing) throw new AppError('operation_failed', 'the agent sent no listing');
  return result.listing;
}

export function operationResultOf(result: OperatorResult): OperationResult {
  return { success: result.success, message: result.message };
}

/**
 * Which device a listing was made on, so that a press goes to the device its element_index was
 * read from: the device is resolved once, at listing time, and a press that names no device
 * follows its cache_id (or, without one, its token's newest listing) instead of resolving the
 * device again (another agent may have connected meanwhile). In memory and bounded: with several
 * gateways a press may reach one that did not see the listing; it then resolves the device as
 * before, and the agent still refuses a listing it does not hold or another token made.
 */
export class ListingDevices {
  private readonly byCacheId = new Map<string, { device: string; expiresAt: number }>();
  private readonly newestByToken = new Map<string, { device: string; expiresAt: number }>();

  constructor(
    private readonly maxEntries = 10_000,
    private readonly now: () => number = Date.now,
  ) {}

  remember(tokenId: string, cacheId: string, device: string, ttlMs: number): void {
    const entry = { device, expiresAt: this.now() + ttlMs };
    this.put(this.byCacheId, cacheId, entry);
    this.put(this.newestByToken, tokenId, entry);
  }

  /** The device of the listing named by cacheId, else of the token's newest listing. */
  deviceFor(tokenId: string, cacheId: string | undefined): string | undefined {
    const entry =
      cacheId === undefined ? this.newestByToken.get(tokenId) : this.byCacheId.get(cacheId);
    return entry && entry.expiresAt > this.now() ? entry.device : undefined;
  }

  private put<K>(
    map: Map<K, { device: string; expiresAt: number }>,
    key: K,
    entry: { device: string; expiresAt: number },
  ): void {
    map.delete(key); // re-insert: Map order is insertion order, the oldest goes first
    map.set(key, entry);
    while (map.size > this.maxEntries) {
      const oldest = map.keys().next();
      if (oldest.done) break;
      map.delete(oldest.value);
    }
  }
}
