import {
  AppError,
  createEnvelope,
  validators,
  type Envelope,
  type ListCommand,
  type OperatorCommand,
  type OperatorResult,
  type ClickCommand,
  type PressCommand,
  type TypeCommand,
} from '@screenfleet/contracts';
import type { Logger } from '@screenfleet/runtime';
import { assertBeforeDeadline, DeadlinePassedError, type Desktop } from '../desktop/desktop';
import { commandDeadline, systemClock, type AgentClock } from '../domain/deadline';
import { CommandRefusedError, type CommandGuard } from '../domain/command-guard';
import { toListing } from '../domain/listing';
import {
  clickByIndex,
  pressByIndex,
  typeByIndex,
  type ByIndex,
  type PressByIndex,
} from '../domain/press-by-index';
import type { SnapshotStore } from '../domain/snapshots';
import type { AgentMetrics } from '../metrics';

export interface CommandHandlerDeps {
  desktop: Desktop;
  snapshots: SnapshotStore;
  metrics: AgentMetrics;
  logger: Logger;
  /** Wall clock for snapshots and sent_at, monotonic clock for deadlines (tests inject both). */
  clock?: AgentClock;
  /** Signature, freshness and replay checks; without one every command is trusted (unit tests). */
  guard?: CommandGuard;
}

/**
 * A failure as the gateway must see it: the error's code, so it maps to the right status.
 * 'timeout' (504) is kept for the deadline refusal alone; any other timeout (a desktop call
 * that did not answer) is a failed command (500 with the reason), not a silent agent.
 */
function toFailure(error: unknown): OperatorResult {
  if (
    error instanceof AppError &&
    (error.code !== 'timeout' || error instanceof DeadlinePassedError)
  ) {
    const failure: OperatorResult = { success: false, code: error.code, message: error.message };
    if (error.fieldErrors.length > 0) failure.errors = error.fieldErrors;
    return failure;
  }
  const reason = error instanceof Error ? error.message : String(error);
  return { success: false, code: 'operation_failed', message: reason };
}

/**
 * Translates operator.command messages into the list and press use cases and answers every
 * command with an operator.result: errors become a result with their code, never a throw, so
 * the gateway always gets an answer it can map. A command's deadline (domain/deadline.ts) is
 * set at receipt: past it, nothing is pressed, whether the command sat in a buffer while the
 * agent was stalled or the desktop was slow to describe or focus the element.
 */
export function createCommandHandler(deps: CommandHandlerDeps) {
  const clock = deps.clock ?? systemClock;
  const now = clock.wall;
  const logger = deps.logger.child({ component: 'commands' });

  const list = async (command: ListCommand): Promise<OperatorResult> => {
    const stop = deps.metrics.listingDuration.startTimer();
    const elements = await deps.desktop.listElements({
      appName: command.app_name,
      windowName: command.window_name ?? undefined,
    });
    stop();
    const snapshot = deps.snapshots.save(command.app_name, elements, now(), command.requested_by);
    const listing = toListing(snapshot, command);
    return {
      success: true,
      message: `listed ${elements.length} elements of ${command.app_name}`,
      listing,
    };
  };

  /** The listed element a command is for. */
  const target = (command: PressCommand | ClickCommand | TypeCommand, deadline: number) => {
    const byIndex: ByIndex = {
      elementIndex: command.element_index,
      deadline,
      requestedBy: command.requested_by,
    };
    if (command.cache_id !== undefined) byIndex.cacheId = command.cache_id;
    return byIndex;
  };

  const press = async (command: PressCommand, deadline: number): Promise<OperatorResult> => {
    const request: PressByIndex = {
      ...target(command, deadline),
      // Canonical names: the command schema admits nothing else (libs/contracts keys.ts).
      key: command.key,
      modifiers: command.modifiers,
    };
    const message = await pressByIndex(deps.desktop, deps.snapshots, request, clock);
    return { success: true, message };
  };

  const run = async (command: OperatorCommand, deadline: number): Promise<OperatorResult> => {
    switch (command.action) {
      case 'list':
        return list(command);
      case 'press':
        return press(command, deadline);
      case 'click': {
        const request = target(command, deadline);
        return {
          success: true,
          message: await clickByIndex(deps.desktop, deps.snapshots, request, clock),
        };
      }
      case 'type': {
        const request = { ...target(command, deadline), text: command.text };
        return {
          success: true,
          message: await typeByIndex(deps.desktop, deps.snapshots, request, clock),
        };
      }
    }
  };

  return async function handle(envelope: Envelope<unknown>): Promise<Envelope<OperatorResult>> {
    const received = { wall: clock.wall(), monotonic: clock.monotonic() };
    const started = received.wall;
    let action = 'invalid';
    let result: OperatorResult;
    try {
      deps.guard?.assertSigned(envelope);
      const command = validators.operatorCommand.parse(envelope.payload);
      action = command.action;
      deps.guard?.assertFresh(envelope, command.timeout_ms);
      const deadline = commandDeadline(command, envelope.sent_at, received);
      assertBeforeDeadline(
        deadline,
        received.monotonic,
        `command ${envelope.message_id} (sent ${envelope.sent_at}, timeout ${command.timeout_ms} ms, budget ${command.budget_ms} ms)`,
      );
      result = await run(command, deadline);
    } catch (error) {
      if (error instanceof CommandRefusedError) {
        deps.metrics.refused.inc({ reason: error.reason });
        logger.warn(
          { audit: 'operator', messageId: envelope.message_id, refused: error.reason },
          error.message,
        );
      }
      result = toFailure(error);
    }
    const outcome = result.success ? 'success' : (result.code ?? 'operation_failed');
    deps.metrics.commands.inc({ action, result: outcome });
    deps.metrics.commandDuration.observe({ action }, (now() - started) / 1000);
    const payload = envelope.payload as Partial<PressCommand> & Partial<Pick<TypeCommand, 'text'>>;
    logger.info(
      {
        audit: 'operator',
        messageId: envelope.message_id,
        // The gateway's request id (X-Request-Id), under the same key as in every service's logs.
        requestId: envelope.correlation_id,
        action,
        elementIndex: payload.element_index,
        cacheId: payload.cache_id,
        key: payload.key,
        modifiers: payload.modifiers,
        // How much was typed, never what: it may be a password.
        textLength: typeof payload.text === 'string' ? Array.from(payload.text).length : undefined,
        result: outcome,
        durationMs: now() - started,
      },
      result.success ? 'command done' : `command refused: ${result.message}`,
    );
    return createEnvelope('operator.result', result, { correlationId: envelope.correlation_id });
  };
}
