import {
  AppError,
  ConflictError,
  StoreUnavailableError,
  ValidationError,
  createEnvelope,
  queueNames,
  validators,
  type ArchiveCommand,
  type ArchiveReply,
  type ArchiveStatus,
  type DataDeletedCounts,
} from '@screenfleet/contracts';
import type { Bus } from '@screenfleet/bus';
import { callWorkers, invalidReply } from './worker-call';

export type ArchiveAction = ArchiveCommand['action'];

export interface ArchiveAnswer {
  status: ArchiveStatus;
  restored?: number;
  /** A restore's archived objects it could not read (at most 100), and how many in all. */
  unreadable?: Array<{ key: string; reason: string }>;
  unreadable_count?: number;
  /** What a delete did. */
  deleted?: DataDeletedCounts;
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
 * the client should see: the worker's refusal as its error kind, or callWorkers' errors (503
 * when no worker answered in time or the broker is down, 502 when the answer breaks the
 * contract: the worker is at fault, not the client).
 */
export async function sendArchiveCommand(
  bus: Pick<Bus, 'call'>,
  command: ArchiveCommand,
  options: { timeoutMs: number; requestId: string },
): Promise<ArchiveAnswer> {
  const reply = await callWorkers<ArchiveReply>(bus, {
    queue: queueNames.archiveRpc,
    worker: 'the archive worker',
    // Built by the routes from bodies they validated; the worker checks it again on arrival.
    request: createEnvelope('archive.command', command, { correlationId: options.requestId }),
    replyType: 'archive.reply',
    reply: validators.archiveReply,
    timeoutMs: options.timeoutMs,
  });
  if (reply.outcome === 'refused') throw refusalErrors[reply.code](reply.message);
  if (command.action === 'restore' && reply.restored === undefined) {
    throw invalidReply('the archive worker', 'a restore reply without the restored count');
  }
  if (command.action === 'delete' && reply.deleted === undefined) {
    throw invalidReply('the archive worker', 'a delete reply without the deleted counts');
  }
  const { outcome: _ok, ...answer } = reply;
  return answer;
}
