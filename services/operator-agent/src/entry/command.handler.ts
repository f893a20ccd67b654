import {
  AppError,
  createEnvelope,
  TimeoutError,
  validators,
  type Envelope,
  type KeyName,
  type ModifierName,
  type ListCommand,
  type OperatorCommand,
  type OperatorResult,
  type PressCommand,
} from '@screenfleet/contracts';
import type { Logger } from '@screenfleet/runtime';
import type { Desktop } from '../desktop';
import { toListing } from '../domain/listing';
import { pressByIndex } from '../domain/press-by-index';
import type { SnapshotStore } from '../domain/snapshots';
import type { AgentMetrics } from '../metrics';

/** Clocks of the gateway and the agent may disagree by this much. */
export const CLOCK_SKEW_MS = 1000;

export interface CommandHandlerDeps {
  desktop: Desktop;
  snapshots: SnapshotStore;
  metrics: AgentMetrics;
  logger: Logger;
  now?: () => number;
}

/** A failure as the gateway must see it: the error's code, so it maps to the right status. */
function toFailure(error: unknown): OperatorResult {
  // A desktop call that timed out is a failed press here, not "the agent did not answer" (504).
  if (error instanceof AppError && error.code !== 'timeout') {
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
 * the gateway always gets an answer it can map. Commands older than their sender's deadline
 * are refused without touching the desktop (they sat in a buffer while the agent was stalled).
 */
export function createCommandHandler(deps: CommandHandlerDeps) {
  const now = deps.now ?? Date.now;
  const logger = deps.logger.child({ component: 'commands' });

  const list = async (command: ListCommand): Promise<OperatorResult> => {
    const stop = deps.metrics.listingDuration.startTimer();
    const elements = await deps.desktop.listElements({
      appName: command.app_name,
      windowName: command.window_name ?? undefined,
    });
    stop();
    const snapshot = deps.snapshots.save(command.app_name, elements, now());
    const listing = toListing(snapshot, command);
    return {
      success: true,
      message: `listed ${elements.length} elements of ${command.app_name}`,
      listing,
    };
  };

  const press = async (command: PressCommand): Promise<OperatorResult> => {
    const message = await pressByIndex(
      deps.desktop,
      deps.snapshots,
      {
        elementIndex: command.element_index,
        key: command.key as KeyName,
        modifiers: command.modifiers as ModifierName[],
      },
      now,
    );
    return { success: true, message };
  };

  const run = (command: OperatorCommand): Promise<OperatorResult> => {
    switch (command.action) {
      case 'list':
        return list(command);
      case 'press':
        return press(command);
    }
  };

  return async function handle(envelope: Envelope<unknown>): Promise<Envelope<OperatorResult>> {
    const started = now();
    let action = 'invalid';
    let result: OperatorResult;
    try {
      const command = validators.operatorCommand.parse(envelope.payload);
      action = command.action;
      const age = started - Date.parse(envelope.sent_at);
      if (!(age <= command.timeout_ms + CLOCK_SKEW_MS)) {
        throw new TimeoutError(
          `command ${envelope.message_id} is ${age} ms old, past its ${command.timeout_ms} ms deadline: not executed`,
        );
      }
      result = await run(command);
    } catch (error) {
      result =
        error instanceof TimeoutError
          ? { success: false, code: 'timeout', message: error.message }
          : toFailure(error);
    }
    const outcome = result.success ? 'success' : (result.code ?? 'operation_failed');
    deps.metrics.commands.inc({ action, result: outcome });
    deps.metrics.commandDuration.observe({ action }, (now() - started) / 1000);
    const payload = envelope.payload as Partial<PressCommand>;
    logger.info(
      {
        audit: 'operator',
        messageId: envelope.message_id,
        correlationId: envelope.correlation_id,
        action,
        elementIndex: payload.element_index,
        key: payload.key,
        modifiers: payload.modifiers,
        result: outcome,
        durationMs: now() - started,
      },
      result.success ? 'command done' : `command refused: ${result.message}`,
    );
    return createEnvelope('operator.result', result, { correlationId: envelope.correlation_id });
  };
}
