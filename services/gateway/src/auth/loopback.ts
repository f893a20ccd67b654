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
