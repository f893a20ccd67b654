import {
  AppError,
  checkMessage,
  createEnvelope,
  validators,
  type ArchiveCommand,
  type ArchiveReply,
  type Envelope,
} from '@screenfleet/contracts';
import type { Logger } from '@screenfleet/runtime';
import type { ArchiveMetrics } from '../metrics';

export interface ArchiveRpcDeps {
  /** Carries out a valid command; rejects with an AppError whose code decides the refusal. */
  execute: (command: ArchiveCommand) => Promise<Extract<ArchiveReply, { outcome: 'ok' }>>;
  metrics: ArchiveMetrics;
  logger: Logger;
}

type Refusal = Extract<ArchiveReply, { outcome: 'refused' }>;

/** Translates archive.command requests on archive.rpc into replies; every request is answered. */
export function createArchiveRpcHandler({ execute, metrics, logger }: ArchiveRpcDeps) {
  return async (request: Envelope<unknown>): Promise<Envelope<ArchiveReply>> => {
    const reply = await answer(request);
    const action = (request.payload as { action?: unknown } | null)?.action;
    metrics.commands.inc({
      action: typeof action === 'string' ? action.slice(0, 20) : 'invalid',
      outcome: reply.outcome === 'ok' ? 'ok' : reply.code,
    });
    return createEnvelope('archive.reply', reply, { correlationId: request.correlation_id });
  };

  async function answer(request: Envelope<unknown>): Promise<ArchiveReply> {
    const errors = checkMessage(request, 'archive.command', validators.archiveCommand);
    if (errors.length > 0) {
      return refuse('validation_failed', errors.map((error) => error.detail).join('; '));
    }
    try {
      return await execute(request.payload as ArchiveCommand);
    } catch (error) {
      return refusal(error);
    }
  }

  function refusal(error: unknown): Refusal {
    const message = error instanceof Error ? error.message : String(error);
    if (error instanceof AppError) {
      switch (error.code) {
        case 'conflict':
          return refuse('conflict', message);
        case 'validation_failed':
          return refuse('validation_failed', message);
        case 'store_unavailable':
          return refuse('store_unavailable', message);
        case 'not_found':
        case 'device_unavailable':
        case 'broker_unavailable':
        case 'timeout':
        case 'desktop_unavailable':
        case 'operation_failed':
        case 'outcome_unknown':
        case 'worker_unavailable':
        case 'deadline_exceeded':
        case 'bad_gateway':
        case 'too_large':
          break;
      }
    }
    logger.error({ err: error }, 'archive command failed');
    return refuse('failed', message);
  }
}

function refuse(code: Refusal['code'], message: string): Refusal {
  return { outcome: 'refused', code, message };
}
