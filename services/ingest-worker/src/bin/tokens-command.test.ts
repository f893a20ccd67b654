import { secretHash } from '@screenfleet/contracts';
import { checkRequest, describeReply, parseTokensCommand, UsageError } from './tokens-command';

const now = Date.parse('2026-11-29T12:00:00Z');
const parse = (line: string, env = {}) => parseTokensCommand(line.split(' '), env, now);

describe('npm run tokens: the command as a tokens.request', () => {
  it('when a token is created, then only the hash of the secret made here is sent', () => {
    const command = parse(
      'create --name desk-17 --scopes ingest,search --devices desk-17 --expires-in 30d',
    );
    const [request] = command.requests;
    expect(request).toMatchObject({
      op: 'create',
      actor: 'cli',
      name: 'desk-17',
      scopes: ['ingest', 'search'],
      devices: ['desk-17'],
      expires_at_ms: now + 30 * 86_400_000,
      secret_hash: secretHash(command.secret!),
    });
    expect(JSON.stringify(request)).not.toContain(command.secret);
    checkRequest(request!);
  });

  it('when a code is created, then its pattern, uses and the hash of its code are sent', () => {
    const command = parse('code create --name lab --scopes ingest --pattern lab-* --uses 200');
    expect(command.secret).toMatch(/^sfe_/);
    expect(command.requests[0]).toMatchObject({
      op: 'create_code',
      device_pattern: 'lab-*',
      uses: 200,
      expires_at_ms: null,
      code_hash: secretHash(command.secret!),
    });
    checkRequest(command.requests[0]!);
  });

  it.each([
    ['list --all', { op: 'list', include_revoked: true }],
    ['revoke tok_0123456789abcdef', { op: 'revoke', actor: 'cli', id: 'tok_0123456789abcdef' }],
    ['code list', { op: 'list_codes', include_revoked: false }],
    [
      'code revoke enr_0123456789abcdef',
      { op: 'revoke_code', actor: 'cli', id: 'enr_0123456789abcdef' },
    ],
  ])('when the command is "%s", then it asks %o', (line, expected) => {
    expect(parse(line).requests).toEqual([expected]);
  });

  it('when GATEWAY_TOKENS is imported, then each entry becomes a stored token with the same secret hash', () => {
    const env = {
      GATEWAY_TOKENS: JSON.stringify([
        { id: 'sre-console', token: 'a-long-enough-secret-01', scopes: ['search', 'operator'] },
        { id: 'desk-1', token: 'a-long-enough-secret-02', scopes: ['ingest'], devices: ['desk-1'] },
      ]),
    };
    const requests = parse('import', env).requests;
    expect(requests).toMatchObject([
      {
        op: 'create',
        name: 'sre-console',
        devices: null,
        secret_hash: secretHash('a-long-enough-secret-01'),
      },
      {
        op: 'create',
        name: 'desk-1',
        devices: ['desk-1'],
        secret_hash: secretHash('a-long-enough-secret-02'),
      },
    ]);
    requests.forEach(checkRequest);
  });

  it.each([
    ['create --scopes ingest', '--name is required'],
    ['create --name a --scopes ingest,admin', 'unknown scope admin'],
    ['create --name a --scopes ingest --expires-in 3w', '--expires-in must look like'],
    [
      'create --name a --scopes ingest --expires-at 2026-01-01T00:00:00Z',
      'the expiry must be in the future',
    ],
    ['code create --name a --scopes ingest --pattern x --uses 0', '--uses must be an integer'],
    ['import', 'import needs GATEWAY_TOKENS'],
    ['rotate', 'unknown command "rotate"'],
  ])('when the command is "%s", then it is refused: %s', (line, message) => {
    expect(() => parse(line)).toThrow(UsageError);
    expect(() => parse(line)).toThrow(message);
  });

  it('when the workers refuse, then the refusal is the error', () => {
    expect(() =>
      describeReply({ outcome: 'refused', code: 'not_found', message: 'no token tok_x' }),
    ).toThrow('refused (not_found): no token tok_x');
  });
});
