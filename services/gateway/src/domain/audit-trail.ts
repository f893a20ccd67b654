import {
  createEnvelope,
  exchangeNames,
  type AuditAction,
  type AuditRecord,
} from '@screenfleet/contracts';
import type { Bus } from '@screenfleet/bus';
import type { Logger } from '@screenfleet/runtime';

/** One audited fact as the entry point that saw it knows it; the trail makes it a row. */
export interface AuditFact {
  action: AuditAction;
  /** The token id that acted. */
  actor: string;
  device: string | null;
  /** The HTTP status answered (200 or 201 when done). */
  status: number;
  /** The error body's code of a refusal or failure. */
  code: string | null;
  /** How long it took at the gateway, in seconds (prom-client's timers give seconds). */
  seconds: number | null;
  details: Record<string, unknown>;
  requestId: string;
}

/** Counts what the broker did not take; the domain defines it, never imports prom-client. */
export interface AuditTrailObserver {
  publishFailed(action: AuditAction): void;
}

export interface AuditTrail {
  /** Publishes the fact; never throws and never delays the answer (see createAuditTrail). */
  record(fact: AuditFact): void;
}

/**
 * ok: done; refused: turned down before it ran (validation, scope, device binding, no agent:
 * every 4xx); failed: tried and failed (5xx, a silent agent's 504).
 */
export function outcomeOf(status: number): AuditRecord['outcome'] {
  if (status < 400) return 'ok';
  return status < 500 ? 'refused' : 'failed';
}

/** The audit.record of a fact: its id is the message's, so a redelivered one is stored once. */
export function auditRecordOf(fact: AuditFact, now: Date = new Date()) {
  const outcome = outcomeOf(fact.status);
  const row: Omit<AuditRecord, 'id'> = {
    at: now.toISOString(),
    actor: fact.actor,
    action: fact.action,
    device: fact.device,
    outcome,
    outcome_code: outcome === 'ok' ? null : (fact.code ?? String(fact.status)).slice(0, 64),
    duration_ms: fact.seconds === null ? null : Math.round(fact.seconds * 10_000) / 10,
    details: fact.details,
  };
  const envelope = createEnvelope('audit.record', row, {
    correlationId: fact.requestId,
    now,
  });
  return { ...envelope, payload: { id: envelope.message_id, ...row } };
}

/**
 * The gateway's audited facts on `audit.v1` (ADR 0019): it cannot write the store, the ingest
 * workers write the rows. Published after the answer is decided and not awaited by it: a broker
 * that is down must not turn a key press that happened into an error, nor one that was refused
 * into a wait. A record the broker did not confirm is logged (with what it said, so the fact
 * is not lost entirely) and counted.
 */
export function createAuditTrail(deps: {
  bus: Pick<Bus, 'publish'>;
  logger: Logger;
  observer: AuditTrailObserver;
}): AuditTrail {
  const logger = deps.logger.child({ component: 'audit-trail' });
  return {
    record(fact) {
      const envelope = auditRecordOf(fact);
      deps.bus.publish(exchangeNames.audit, '', envelope).catch((err: unknown) => {
        deps.observer.publishFailed(fact.action);
        logger.error(
          { err, requestId: fact.requestId, audit: envelope.payload },
          'audit record not published: the audit trail misses this row',
        );
      });
    },
  };
}
