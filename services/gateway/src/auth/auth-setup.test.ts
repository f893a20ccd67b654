import { resolveAuth } from './auth-setup';

// What resolveAuth decides before it touches the data directory (the local token file is in
// ../../test/auth.int.test.ts). The directory here does not exist: nothing may use it.
const desk = { id: 'test-desk1', token: 'test-token-ingest-desk-1-01', devices: ['desk-1'] };
const tokens = {
  ingestDesk1: { ...desk, scopes: ['ingest'] },
  all: { id: 'test-all', token: 'test-token-all-scopes-0001', scopes: ['ingest', 'operator'] },
};

describe('gateway auth set-up', () => {
  const config = (overrides: Partial<Parameters<typeof resolveAuth>[0]> = {}) => ({
    host: '127.0.0.1',
    tokens: undefined,
    allowUnauthenticatedLoopback: false,
    dataDir: '/nonexistent/screenfleet-auth-unit',
    ...overrides,
  });

  it('when no tokens are configured and the host is not loopback, then only stored tokens are accepted: no local token is made', () => {
    const setup = resolveAuth(config({ host: '0.0.0.0' }));
    expect(setup.localToken).toBeUndefined();
    expect(setup.staticTokens).toEqual([]);
    expect(setup.auth.tokens.find(tokens.all.token)).toBeUndefined();
  });

  it('when the unauthenticated switch is on and the host is not loopback, then the gateway refuses to start, tokens or not', () => {
    expect(() =>
      resolveAuth(
        config({
          host: '10.0.0.5',
          allowUnauthenticatedLoopback: true,
          tokens: JSON.stringify([tokens.all]),
        }),
      ),
    ).toThrow(/GATEWAY_ALLOW_UNAUTHENTICATED_LOOPBACK needs GATEWAY_HOST on loopback/);
  });

  it('when tokens are configured, then only they are accepted and no local token is made', () => {
    const setup = resolveAuth(
      config({ host: '0.0.0.0', tokens: JSON.stringify([tokens.ingestDesk1]) }),
    );
    expect(setup.localToken).toBeUndefined();
    expect(setup.auth.tokens.find(tokens.ingestDesk1.token)).toEqual({
      id: 'test-desk1',
      scopes: ['ingest'],
      devices: ['desk-1'],
    });
    expect(setup.auth.tokens.find(tokens.all.token)).toBeUndefined();
  });

  it.each([
    [
      '[{"id":"a","token":"short","scopes":["ingest"]}]',
      'GATEWAY_TOKENS[0].token must be a string of at least 16 characters',
    ],
    [
      '[{"id":"a","token":"0123456789abcdef","scopes":["admin"]}]',
      'GATEWAY_TOKENS[0].scopes must be a list of: ingest, search, operator, archive:read, archive:write, data:delete, metrics',
    ],
    ['{"id":"a"}', 'GATEWAY_TOKENS must be a JSON list'],
    ['not json', 'GATEWAY_TOKENS must be a JSON list of {id, token, scopes, devices?}'],
  ])('when GATEWAY_TOKENS is %s, then start-up fails saying why', (value, message) => {
    expect(() => resolveAuth(config({ tokens: value }))).toThrow(message);
  });
});
