import {
  AppError,
  ConflictError,
  StoreUnavailableError,
  TimeoutError,
  ValidationError,
  createEnvelope,
  queueNames,
  validators,
  type ArchiveCommand,
  type ArchiveReply,
  type ArchiveStatus,
} from '@screenfleet/contracts';
import type { Bus } from '@screenfleet/bus';
import type { ArchiveMetrics } from '../metrics';
import { HttpError, RETRY_AFTER_SECONDS } from './http-error';

export type ArchiveAction = ArchiveCommand['action'];

export interface ArchiveAnswer {
  status: ArchiveStatus;
  restored?: number;
  /** A restore's archived objects it could not read (at most 100), and how many in all. */
  unreadable?: Array<{ key: string; reason: string }>;
  unreadable_count?: number;
}

type Refusal = Extract<ArchiveReply, { outcome: 'refused' }>;

/** The worker's refusals as the error kinds the gateway maps to statuses (409, 400, 503, 500). */
const refusalErrors: Record<Refusal['code'], (message: string) => AppError> = {
  conflict: (message) => new ConflictError(message),
  validation_failed: (message) => new ValidationError(message, []),
  store_unavailable: (message) => new StoreUnavailableError(message),
  failed: (message) => new AppError('operation_failed', message),
};

/**
 * Asks the archive worker over `archive.rpc` and returns the status it answered, or throws what
 * the client should see: the worker's refusal as its error kind, 503 when no worker answered in
 * time or the broker is down, 502 when the answer breaks the contract (the worker is at fault,
 * not the client, and asking again will not help until it is fixed).
 */
export async function sendArchiveCommand(
  bus: Pick<Bus, 'call'>,
  command: ArchiveCommand,
  options: { timeoutMs: number; requestId: string; metrics: ArchiveMetrics },
): Promise<ArchiveAnswer> {
  const { action } = command;
  const stop = options.metrics.callDuration.startTimer({ action });
  let result = 'ok';
  try {
    // Built by the routes from bodies they validated; the worker checks it again on arrival.
    const request = createEnvelope('archive.command', command, {
      correlationId: options.requestId,
    });
    const reply = await callWorker(bus, request, options.timeoutMs);
    const answer = readReply(action, reply.type, reply.payload);
    if ('code' in answer) {
      result = answer.code;
      throw refusalErrors[answer.code](answer.message);
    }
    return answer;
  } catch (error) {
    if (result === 'ok') result = resultLabel(error);
    throw error;
  } finally {
    stop();
    options.metrics.calls.inc({ action, result });
  }
}

async function callWorker(
  bus: Pick<Bus, 'call'>,
  request: ReturnType<typeof createEnvelope>,
  timeoutMs: number,
) {
  try {
    return await bus.call<unknown>(queueNames.archiveRpc, request, { timeoutMs });
  } catch (error) {
    if (error instanceof TimeoutError) {
      throw new HttpError(
        503,
        'archive_timeout',
        `the archive worker did not answer within ${timeoutMs} ms (is an archive worker running?)`,
        [],
        { 'Retry-After': RETRY_AFTER_SECONDS },
      );
    }
    // The bus could not read the reply at all (not an envelope).
    if (error instanceof AppError && error.code === 'operation_failed') {
      throw invalidReply(error.message);
    }
    throw error;
  }
}

function readReply(action: ArchiveAction, type: string, payload: unknown): ArchiveAnswer | Refusal {
  if (type !== 'archive.reply') throw invalidReply(`a ${type} message instead of archive.reply`);
  // check() also drops fields the contract does not know, so the status is relayed exactly.
  const errors = validators.archiveReply.check(payload);
  if (errors.length > 0) {
    throw invalidReply(
      errors
        .slice(0, 3)
        .map((e) => e.detail)
        .join('; '),
    );
  }
  const reply = payload as ArchiveReply;
  if (reply.outcome === 'refused') return reply;
  if (action === 'restore' && reply.restored === undefined) {
    throw invalidReply('a restore reply without the restored count');
  }
  const { outcome: _ok, ...answer } = reply;
  return answer;
}

function invalidReply(detail: string): HttpError {
  return new HttpError(
    502,
    'archive_invalid_reply',
    `the archive worker sent an invalid reply: ${detail}`,
  );
}

function resultLabel(error: unknown): string {
  if (error instanceof HttpError) {
    return error.reason === 'archive_timeout' ? 'timeout' : 'invalid_reply';
  }
  if (error instanceof AppError) return error.code;
  return 'error';
}
