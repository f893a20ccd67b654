import {
  ConflictError,
  createEnvelope,
  NotFoundError,
  StoreUnavailableError,
  validators,
  type TokensReply,
} from '@screenfleet/contracts';
import { createLogger, createMetrics } from '@screenfleet/runtime';
import type { TokenAdmin } from '../domain/token-admin';
import { createIngestMetrics } from '../metrics';
import { createTokensRpcHandler } from './tokens.rpc';

// The admin is a fake: this is the translation of its answers and errors into replies.
function handlerWith(admin: Partial<TokenAdmin>) {
  const metrics = createIngestMetrics(createMetrics(), () => Promise.resolve(0));
  const handle = createTokensRpcHandler({
    admin: admin as TokenAdmin,
    metrics,
    logger: createLogger({ service: 'test', level: 'silent' }),
  });
  return async (payload: unknown, type: 'tokens.request' | 'search.request' = 'tokens.request') => {
    const reply = await handle(createEnvelope(type, payload));
    expect(reply.type).toBe('tokens.reply');
    expect(validators.tokensReply.check(structuredClone(reply.payload))).toEqual([]);
    return reply.payload;
  };
}

const revoke = { op: 'revoke', actor: 'tok_0123456789abcdef', id: 'tok_0123456789abcdef' };

describe('tokens.rpc handler', () => {
  it.each([
    [
      'the store is down',
      new StoreUnavailableError('token store unavailable'),
      'store_unavailable',
    ],
    ['the id is unknown', new NotFoundError('no token has the id'), 'not_found'],
    ['the id is stored already', new ConflictError('stored already'), 'conflict'],
  ])('when %s, then the reply is refused %s with its message', async (_, error, code) => {
    const ask = handlerWith({ revoke: () => Promise.reject(error) });

    expect(await ask(revoke)).toEqual({ outcome: 'refused', code, message: error.message });
  });

  it('when anything else fails, then the reply is failed and the cause stays in the log', async () => {
    const ask = handlerWith({
      revoke: () => Promise.reject(new Error('driver said: secret connection string')),
    });

    const reply = await ask(revoke);

    expect(reply).toMatchObject({ outcome: 'refused', code: 'failed' });
    expect(JSON.stringify(reply)).not.toContain('secret connection string');
  });

  it('when the request breaks the contract or is another type, then validation_failed, and the admin is not asked', async () => {
    const ask = handlerWith({});

    expect(await ask({ op: 'revoke', id: 'x' })).toMatchObject({
      outcome: 'refused',
      code: 'validation_failed',
    });
    expect(await ask({ op: 'snapshot' }, 'search.request')).toMatchObject({
      outcome: 'refused',
      code: 'validation_failed',
    });
  });

  it("when an enrolment is refused, then the reply carries the domain's reason", async () => {
    const ask = handlerWith({
      enrol: () => Promise.resolve({ ok: false, refusal: 'device_not_allowed' }),
    });

    const reply: TokensReply = await ask({
      op: 'enrol',
      code_hash: '0'.repeat(64),
      device_name: 'laptop',
      token_id: 'tok_0123456789abcdef',
      secret_hash: '1'.repeat(64),
    });

    expect(reply).toMatchObject({ outcome: 'refused', code: 'device_not_allowed' });
  });

  it('when gateways report uses, then the reply is recorded', async () => {
    const uses: unknown[] = [];
    const ask = handlerWith({
      used: (request) => {
        uses.push(request);
        return Promise.resolve();
      },
    });

    const at = Date.UTC(2026, 10, 29);
    expect(await ask({ op: 'used', uses: [{ id: 'tok_0123456789abcdef', at_ms: at }] })).toEqual({
      outcome: 'recorded',
    });
    expect(uses).toEqual([{ op: 'used', uses: [{ id: 'tok_0123456789abcdef', at_ms: at }] }]);
  });
});
