import {
  AppError,
  checkMessage,
  createEnvelope,
  validators,
  type Envelope,
  type TokensReply,
  type TokensRequest,
} from '@screenfleet/contracts';
import type { Logger } from '@screenfleet/runtime';
import type { TokenAdmin } from '../domain/token-admin';
import type { IngestMetrics } from '../metrics';

export interface TokensRpcDeps {
  admin: TokenAdmin;
  /** The worker's counter; the tokens CLI, which answers its own requests, counts nothing. */
  metrics: { tokensRequests: Pick<IngestMetrics['tokensRequests'], 'inc'> };
  logger: Logger;
}

type Refusal = Extract<TokensReply, { outcome: 'refused' }>;

/**
 * Translates tokens.request messages on tokens.rpc.v1 into replies (ADR 0019). Every request is
 * answered: with what it asked, or with why not (`store_unavailable`, `not_found`, `conflict`,
 * an enrolment's reason; anything unforeseen is `failed`, its cause only in this log).
 */
export function createTokensRpcHandler({ admin, metrics, logger }: TokensRpcDeps) {
  return async (request: Envelope<unknown>): Promise<Envelope<TokensReply>> => {
    const { op, reply } = await answer(request);
    const outcome = reply.outcome === 'refused' ? reply.code : 'ok';
    metrics.tokensRequests.inc({ op, outcome });
    logger.debug({ requestId: request.correlation_id, op, outcome }, 'tokens request answered');
    return createEnvelope('tokens.reply', reply, { correlationId: request.correlation_id });
  };

  async function answer(request: Envelope<unknown>): Promise<{ op: string; reply: TokensReply }> {
    const errors = checkMessage(request, 'tokens.request', validators.tokensRequest);
    if (errors.length > 0) {
      const reason = errors.map((error) => error.detail).join('; ');
      return { op: 'invalid', reply: refuse('validation_failed', reason) };
    }
    const asked = request.payload as TokensRequest;
    try {
      return { op: asked.op, reply: await perform(asked) };
    } catch (error) {
      return { op: asked.op, reply: refusal(error, asked.op, request.correlation_id) };
    }
  }

  async function perform(asked: TokensRequest): Promise<TokensReply> {
    switch (asked.op) {
      case 'snapshot':
        return { outcome: 'snapshot', tokens: await admin.snapshot() };
      case 'list':
        return { outcome: 'tokens', tokens: await admin.list(asked) };
      case 'create':
        return { outcome: 'token', token: await admin.create(asked) };
      case 'revoke':
        return { outcome: 'token', token: await admin.revoke(asked) };
      case 'list_codes':
        return { outcome: 'codes', codes: await admin.listCodes(asked) };
      case 'create_code':
        return { outcome: 'code', code: await admin.createCode(asked) };
      case 'revoke_code':
        return { outcome: 'code', code: await admin.revokeCode(asked) };
      case 'enrol': {
        const enrolled = await admin.enrol(asked);
        return enrolled.ok
          ? { outcome: 'token', token: enrolled.token }
          : refuse(enrolled.refusal, enrolmentMessages[enrolled.refusal]);
      }
      case 'used':
        await admin.used(asked);
        return { outcome: 'recorded' };
    }
  }

  /** The one place an error becomes a refusal, logged by what it means. */
  function refusal(error: unknown, op: string, requestId: string): Refusal {
    if (error instanceof AppError && error.code === 'store_unavailable') {
      logger.warn({ err: error, requestId, op }, 'tokens: store unavailable');
      return refuse('store_unavailable', error.message);
    }
    if (error instanceof AppError && (error.code === 'not_found' || error.code === 'conflict')) {
      return refuse(error.code, error.message);
    }
    logger.error({ err: error, requestId, op }, 'tokens request failed');
    // The cause stays in this log: a driver's message is no business of an HTTP client.
    return refuse('failed', `the tokens ${op} failed in the ingest worker (its log says why)`);
  }
}

const enrolmentMessages: Record<
  Extract<Refusal['code'], `enrolment_${string}` | 'device_not_allowed'>,
  string
> = {
  enrolment_code_invalid: 'no enrolment code matches',
  enrolment_code_revoked: 'the enrolment code was revoked',
  enrolment_code_expired: 'the enrolment code has expired',
  enrolment_code_used_up: 'every use of the enrolment code is taken',
  device_not_allowed: "the device name does not match the enrolment code's device pattern",
};

function refuse(code: Refusal['code'], message: string): Refusal {
  return { outcome: 'refused', code, message };
}
