import net from 'node:net';

/** True for 127.0.0.0/8, ::1 and IPv4-mapped loopback addresses. */
export function isLoopback(address: string | undefined): boolean {
  if (!address) return false;
  const plain = address.startsWith('::ffff:') ? address.slice(7) : address;
  if (plain === '::1' || plain === 'localhost') return true;
  return net.isIPv4(plain) && plain.startsWith('127.');
}

/** The name in a Host header (or URL host) without its port or IPv6 brackets. */
function hostName(host: string): string {
  const bracketed = /^\[([^\]]*)\](?::\d*)?$/.exec(host);
  if (bracketed) return bracketed[1] ?? '';
  return host.replace(/:\d*$/, '');
}

/**
 * True when a Host header names this machine: 127.0.0.0/8, localhost or [::1], any port. A
 * page that reached a loopback port through DNS rebinding still sends its own name here.
 */
export function isLoopbackHost(host: string | undefined): boolean {
  if (!host) return false;
  const name = hostName(host.trim().toLowerCase());
  if (name.includes(':') && !net.isIPv6(name)) return false;
  return isLoopback(name);
}

/** True when an Origin header is absent (not a browser) or itself a loopback origin. */
export function isLoopbackOrigin(origin: string | undefined): boolean {
  if (origin === undefined) return true;
  try {
    const url = new URL(origin);
    return (url.protocol === 'http:' || url.protocol === 'https:') && isLoopbackHost(url.host);
  } catch {
    return false; // "null" (sandboxed frames, file: pages) and anything unparsable
  }
}

/**
 * Host names as GATEWAY_HEALTH_ALLOWED_HOSTS lists them, checked and in the form isAllowedHost
 * compares (lower case, no trailing dot, IPv6 without brackets): a name, an IPv4 address or a
 * bracketed IPv6 one. A scheme, port, path or wildcard is refused, naming the variable.
 */
export function parseAllowedHosts(names: readonly string[]): string[] {
  const label = /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/;
  return names.map((given) => {
    const name = given.trim().toLowerCase().replace(/\.$/, '');
    const ipv6 = /^\[([^\]]*)\]$/.exec(name)?.[1];
    if (ipv6 !== undefined ? net.isIPv6(ipv6) : name.split('.').every((l) => label.test(l))) {
      return ipv6 ?? name;
    }
    throw new Error(
      `GATEWAY_HEALTH_ALLOWED_HOSTS: "${given}" is not a host name (no scheme, port, path or wildcard)`,
    );
  });
}

/** True when a Host header names one of `names` (as parseAllowedHosts gives them), any port. */
export function isAllowedHost(host: string | undefined, names: readonly string[]): boolean {
  if (!host || names.length === 0) return false;
  return names.includes(hostName(host.trim().toLowerCase()).replace(/\.$/, ''));
}
