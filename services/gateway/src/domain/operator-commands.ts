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

export function toListCommand(
  request: ListElementsRequest,
  timeoutMs: number,
  requestedBy: string,
): ListCommand {
  const command: ListCommand = {
    action: 'list',
    timeout_ms: timeoutMs,
    budget_ms: operatorTimings(timeoutMs).budgetMs,
    requested_by: requestedBy,
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
 * keys.ts): the signed command carries canonical names and the agent resolves nothing. cache_id
 * pins the listing element_index reads, and without it the agent accepts only a listing made
 * with the same token (requestedBy).
 */
export function toPressCommand(
  request: PressKeyRequest,
  timeoutMs: number,
  requestedBy: string,
): PressCommand {
  const { key, modifiers } = resolvePressKey(request);
  const command: PressCommand = {
    action: 'press',
    timeout_ms: timeoutMs,
    budget_ms: operatorTimings(timeoutMs).budgetMs,
    requested_by: requestedBy,
    element_index: request.element_index,
    key,
    modifiers,
  };
  if (request.cache_id != null) command.cache_id = request.cache_id;
  return command;
}

/** The agent's command for a click request: the element and the listing it was read from. */
export function toClickCommand(
  request: ClickByIndexRequest,
  timeoutMs: number,
  requestedBy: string,
): ClickCommand {
  const command: ClickCommand = {
    action: 'click',
    timeout_ms: timeoutMs,
    budget_ms: operatorTimings(timeoutMs).budgetMs,
    requested_by: requestedBy,
    element_index: request.element_index,
  };
  if (request.cache_id != null) command.cache_id = request.cache_id;
  return command;
}

/** The agent's command for a type request: the element, the listing and the text as sent. */
export function toTypeCommand(
  request: TypeByIndexRequest,
  timeoutMs: number,
  requestedBy: string,
): TypeCommand {
  const command: TypeCommand = {
    action: 'type',
    timeout_ms: timeoutMs,
    budget_ms: operatorTimings(timeoutMs).budgetMs,
    requested_by: requestedBy,
    element_index: request.element_index,
    text: request.text,
  };
  if (request.cache_id != null) command.cache_id = request.cache_id;
  return command;
}

export function listingOf(result: OperatorResult): ListElementsResponse {
  if (!result.listing) throw new AppError('operation_failed', 'the agent sent no listing');
  return result.listing;
}

export function operationResultOf(result: OperatorResult): OperationResult {
  return { success: result.success, message: result.message };
}
