import net from 'node:net';

/** True for 127.0.0.0/8, ::1 and IPv4-mapped loopback addresses. */
export function isLoopback(address: string | undefined): boolean {
  if (!address) return false;
  const plain = address.startsWith('::ffff:') ? address.slice(7) : address;
  if (plain === '::1' || plain === 'localhost') return true;
  return net.isIPv4(plain) && plain.startsWith('127.');
}
