import ipaddr from 'ipaddr.js';

/**
 * Whether an address is outside public unicast space — where a webhook must never connect:
 * loopback, private (RFC 1918), link-local (cloud metadata 169.254.169.254 among them), CGNAT
 * 100.64/10, 0/8, 192.0.0/24, benchmarking 198.18/15, the documentation ranges, multicast, 240/4,
 * broadcast; IPv6 unspecified, loopback, ULA fc00::/7 (fd00:ec2::254), fe80::/10, 2001:db8::/32,
 * discard, benchmarking, Teredo and every other special range. IPv4 embedded in IPv6 — mapped
 * `::ffff:a.b.c.d`, NAT64 `64:ff9b::/96` (and /48) and 6to4 `2002::/16` — is judged by the IPv4
 * inside. Anything that does not parse is forbidden.
 */
export function isForbiddenAddress(address: string): boolean {
  let parsed: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    parsed = ipaddr.parse(address.replace(/^\[|\]$/g, '').replace(/%.*$/, ''));
  } catch {
    return true;
  }
  if (parsed.kind() === 'ipv4') return parsed.range() !== 'unicast';
  const v6 = parsed as ipaddr.IPv6;
  const embedded = embeddedIPv4(v6);
  if (embedded) return embedded.range() !== 'unicast';
  return v6.range() !== 'unicast';
}

/** The IPv4 address carried by a mapped, NAT64 (RFC 6052) or 6to4 IPv6 address, if any. */
function embeddedIPv4(address: ipaddr.IPv6): ipaddr.IPv4 | null {
  const range = address.range();
  const bytes = address.toByteArray();
  if (range === 'ipv4Mapped') return address.toIPv4Address();
  if (range === 'rfc6052') return ipaddr.fromByteArray(bytes.slice(12, 16)) as ipaddr.IPv4;
  if (range === '6to4') return ipaddr.fromByteArray(bytes.slice(2, 6)) as ipaddr.IPv4;
  return null;
}

/** Whether a URL host is an IP literal (WHATWG URL has already normalized 0x7f.1, 2130706433…). */
export function isIpLiteral(hostname: string): boolean {
  return ipaddr.isValid(hostname.replace(/^\[|\]$/g, ''));
}
