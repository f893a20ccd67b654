import {
  AppError,
  createEnvelope,
  queueNames,
  StoreUnavailableError,
  validators,
  type TokensReply,
  type TokensRequest,
} from '@screenfleet/contracts';
import type { Bus } from '@screenfleet/bus';
import { callWorkers, invalidReply } from '../domain/worker-call';
import type { StoredTokens } from './token-cache';

const worker = 'an ingest worker';

/**
 * The token store as the gateway reaches it: tokens.rpc, served by the ingest workers (ADR 0019;
 * the gateway holds no store of its own, ADR 0008). Throws callWorkers' errors (no answer in time,
 * the broker down, a reply that breaks the contract) and the worker's refusals.
 */
export function createTokensRpcClient(
  bus: Pick<Bus, 'call'>,
  options: { timeoutMs: number },
): StoredTokens {
  const ask = (request: TokensRequest) =>
    callWorkers<TokensReply>(bus, {
      queue: queueNames.tokensRpc,
      worker,
      request: createEnvelope('tokens.request', request),
      replyType: 'tokens.reply',
      reply: validators.tokensReply,
      timeoutMs: options.timeoutMs,
    });
  return {
    async snapshot() {
      const reply = await ask({ op: 'snapshot' });
      if (reply.outcome === 'snapshot') return reply.tokens;
      throw unexpected(reply);
    },
    async recordUses(uses) {
      const reply = await ask({ op: 'used', uses });
      if (reply.outcome !== 'recorded') throw unexpected(reply);
    },
  };
}

function unexpected(reply: TokensReply): AppError {
  if (reply.outcome !== 'refused') return invalidReply(worker, `a ${reply.outcome} reply`);
  if (reply.code === 'store_unavailable')
    return new StoreUnavailableError(`the token store is unavailable: ${reply.message}`);
  return invalidReply(worker, `refused (${reply.code}): ${reply.message}`);
}
