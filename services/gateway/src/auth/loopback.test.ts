import {
  isAllowedHost,
  isLoopback,
  isLoopbackHost,
  isLoopbackOrigin,
  parseAllowedHosts,
} from './loopback';

describe('loopback: the peer address, the Host and Origin headers', () => {
  it.each([
    ['127.0.0.1', true],
    ['127.8.9.10', true],
    ['::1', true],
    ['::ffff:127.0.0.1', true],
    ['0.0.0.0', false],
    ['192.168.1.2', false],
    ['::', false],
  ])('when the peer address is %s, then loopback is %s', (address, expected) => {
    expect(isLoopback(address)).toBe(expected);
  });

  it.each([
    ['127.0.0.1:3030', true],
    ['127.0.0.1', true],
    ['127.1.2.3:80', true],
    ['localhost:3030', true],
    ['LOCALHOST', true],
    ['[::1]:3030', true],
    ['[::1]', true],
    ['evil.example:3030', false],
    ['localhost.evil.example', false],
    ['127.0.0.1.nip.io:3030', false],
    ['10.0.0.1:3030', false],
    ['[::2]:3030', false],
    ['', false],
    [undefined, false],
  ])('when Host is %s, then loopback is %s', (host, expected) => {
    expect(isLoopbackHost(host)).toBe(expected);
  });

  it.each([
    [undefined, true],
    ['http://127.0.0.1:3030', true],
    ['http://localhost:5173', true],
    ['https://[::1]:8443', true],
    ['http://evil.example:3030', false],
    ['null', false],
    ['file://', false],
    ['http://localhost.evil.example', false],
  ])('when Origin is %s, then it is allowed: %s', (origin, expected) => {
    expect(isLoopbackOrigin(origin)).toBe(expected);
  });
});

describe('GATEWAY_HEALTH_ALLOWED_HOSTS: host names a tokenless /health may name', () => {
  const allowed = parseAllowedHosts(['Fleet.Example.', 'health.internal', '10.0.0.5', '[FD00::1]']);

  it('when names are listed, then they are kept lower case, without a trailing dot or IPv6 brackets', () => {
    expect(allowed).toEqual(['fleet.example', 'health.internal', '10.0.0.5', 'fd00::1']);
  });

  it.each([
    ['fleet.example:3030', true],
    ['FLEET.EXAMPLE', true],
    ['fleet.example.:443', true],
    ['10.0.0.5:3030', true],
    ['[fd00::1]:3030', true],
    ['evil.fleet.example', false],
    ['fleet.example.evil.example:3030', false],
    ['10.0.0.6', false],
    ['', false],
    [undefined, false],
  ])('when Host is %s, then it is allowed: %s', (host, expected) => {
    expect(isAllowedHost(host, allowed)).toBe(expected);
  });

  it('when nothing is listed, then no Host is allowed by the list', () => {
    expect(isAllowedHost('fleet.example', parseAllowedHosts([]))).toBe(false);
  });

  it.each([
    'http://fleet.example',
    'fleet.example:3030',
    '*.example',
    'fleet.example/health',
    '[nope]',
  ])('when %s is listed, then the start fails naming the variable', (name) => {
    expect(() => parseAllowedHosts([name])).toThrow(
      /^GATEWAY_HEALTH_ALLOWED_HOSTS: ".*" is not a host name/,
    );
  });
});
