import {
  AppError,
  checkMessage,
  createEnvelope,
  validators,
  type AuditReply,
  type AuditRequest,
  type AuditRowView,
  type Envelope,
} from '@screenfleet/contracts';
import type { Logger } from '@screenfleet/runtime';
import type { AuditRow, AuditStore } from '@screenfleet/storage';

export interface AuditRpcDeps {
  store: Pick<AuditStore, 'query'>;
  logger: Logger;
}

type Refusal = Extract<AuditReply, { outcome: 'refused' }>;

/**
 * Translates audit.request messages on search.rpc (GET /audit, a read of the store like a
 * search) into audit.reply: a page of rows newest first and the cursor of the next, or why not
 * (a cursor that is not ours: `validation_failed`; the store unreachable: `store_unavailable`).
 */
export function createAuditRpcHandler({ store, logger }: AuditRpcDeps) {
  return async (request: Envelope<unknown>): Promise<Envelope<AuditReply>> => {
    const reply = await answer(request);
    logger.debug(
      {
        requestId: request.correlation_id,
        outcome: reply.outcome === 'ok' ? 'ok' : reply.code,
        ...(reply.outcome === 'ok' ? { rows: reply.rows.length } : {}),
      },
      'audit answered',
    );
    return createEnvelope('audit.reply', reply, { correlationId: request.correlation_id });
  };

  async function answer(request: Envelope<unknown>): Promise<AuditReply> {
    const errors = checkMessage(request, 'audit.request', validators.auditRequest);
    if (errors.length > 0) {
      return refuse('validation_failed', errors.map((error) => error.detail).join('; '));
    }
    const asked = request.payload as AuditRequest;
    try {
      const page = await store.query({
        limit: asked.limit,
        ...(asked.device !== undefined ? { device: asked.device } : {}),
        ...(asked.actor !== undefined ? { actor: asked.actor } : {}),
        ...(asked.action !== undefined ? { action: asked.action } : {}),
        ...(asked.from !== undefined ? { from: new Date(asked.from) } : {}),
        ...(asked.to !== undefined ? { to: new Date(asked.to) } : {}),
        ...(asked.cursor !== undefined ? { cursor: asked.cursor } : {}),
      });
      return { outcome: 'ok', rows: page.rows.map(toAuditRowView), next_cursor: page.nextCursor };
    } catch (error) {
      if (error instanceof AppError && error.code === 'validation_failed') {
        return refuse('validation_failed', error.message);
      }
      if (error instanceof AppError && error.code === 'store_unavailable') {
        logger.warn({ err: error, requestId: request.correlation_id }, 'audit: store unavailable');
        return refuse('store_unavailable', error.message);
      }
      logger.error({ err: error, requestId: request.correlation_id }, 'audit read failed');
      return refuse(
        'failed',
        'reading the audit trail failed in the ingest worker (its log says why)',
      );
    }
  }
}

/** A stored row as GET /audit shows it. */
export function toAuditRowView(row: AuditRow): AuditRowView {
  return {
    id: row.id,
    at: row.at.toISOString(),
    actor: row.actor,
    // Rows are written from audit.record messages and this worker's own changes: known actions.
    action: row.action as AuditRowView['action'],
    device: row.device,
    outcome: row.outcome,
    outcome_code: row.outcomeCode,
    duration_ms: row.durationMs,
    details: row.details,
  };
}

function refuse(code: Refusal['code'], message: string): Refusal {
  return { outcome: 'refused', code, message };
}
