import {
  AppError,
  StoreUnavailableError,
  ValidationError,
  createEnvelope,
  queueNames,
  validators,
  type AuditPageView,
  type AuditReply,
  type AuditRequest,
} from '@screenfleet/contracts';
import type { Bus } from '@screenfleet/bus';
import { callWorkers } from './worker-call';

/**
 * GET /audit: a read of the store the ingest workers own, asked over `search.rpc` like a
 * search (ADR 0019). Throws what the client should see: callWorkers' errors (503, 502), a
 * cursor the worker does not know (its validation_failed: only the cursor is not checked
 * before) as the 400 on query.cursor, 503 the store down.
 */
export async function readAudit(
  bus: Pick<Bus, 'call'>,
  request: AuditRequest,
  options: { timeoutMs: number; requestId: string },
): Promise<AuditPageView> {
  const reply = await callWorkers<AuditReply>(bus, {
    queue: queueNames.searchRpc,
    worker: 'an ingest worker',
    request: createEnvelope('audit.request', request, { correlationId: options.requestId }),
    replyType: 'audit.reply',
    reply: validators.auditReply,
    timeoutMs: options.timeoutMs,
  });
  if (reply.outcome === 'ok') return { rows: reply.rows, next_cursor: reply.next_cursor };
  switch (reply.code) {
    case 'validation_failed':
      throw new ValidationError(`invalid audit query: the cursor is not valid (${reply.message})`, [
        {
          path: 'query.cursor',
          rule: 'cursor',
          detail: 'cursor must be a next_cursor this API answered; start again without one',
        },
      ]);
    case 'store_unavailable':
      throw new StoreUnavailableError(`the audit store is unavailable: ${reply.message}`);
    case 'failed':
      throw new AppError('operation_failed', reply.message);
  }
}
