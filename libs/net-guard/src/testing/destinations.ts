/**
 * Destinations a webhook must never reach, and public ones it may — for the net-guard specs and
 * for the subscription routes' tests (through POST and PATCH). `resolvesTo` is what the injected
 * resolver answers for the host.
 */
export interface DestinationCase {
  url: string;
  resolvesTo?: string[];
  why: string;
}

const PUBLIC_V4 = '93.184.215.14';
const PUBLIC_V6 = '2606:2800:21f:cb07:6820:80da:af6b:e8b3';

/** Names resolving (through the injected resolver) to one forbidden address. */
const resolvingTo = (address: string, why: string): DestinationCase => ({
  url: `https://hooks-${address.replace(/[^0-9a-f]/gi, '-')}.example.net/receive`,
  resolvesTo: [address],
  why: `a name resolving to ${why} (${address})`,
});

export const HOSTILE_DESTINATIONS: readonly DestinationCase[] = [
  // Scheme, port, credentials, fragment, malformed.
  { url: 'http://example.com/hook', resolvesTo: [PUBLIC_V4], why: 'plain http' },
  { url: 'ftp://example.com/hook', why: 'another scheme' },
  { url: 'javascript:alert(1)', why: 'not a network URL' },
  { url: 'https://example.com:8443/hook', resolvesTo: [PUBLIC_V4], why: 'a port other than 443' },
  { url: 'https://example.com:80/hook', resolvesTo: [PUBLIC_V4], why: 'port 80 over https' },
  { url: 'https://user:secret@example.com/hook', resolvesTo: [PUBLIC_V4], why: 'credentials' },
  { url: 'https://user@example.com/hook', resolvesTo: [PUBLIC_V4], why: 'a user name' },
  { url: 'https://example.com/hook#frag', resolvesTo: [PUBLIC_V4], why: 'a fragment' },
  { url: 'https://example.com/hook#', resolvesTo: [PUBLIC_V4], why: 'an empty fragment' },
  { url: 'not a url', why: 'malformed' },
  { url: '//example.com/hook', why: 'relative' },
  // IP literals in every spelling.
  { url: 'https://127.0.0.1/hook', why: 'IPv4 loopback literal' },
  { url: 'https://2130706433/hook', why: 'decimal IPv4' },
  { url: 'https://0177.0.0.1/hook', why: 'octal IPv4' },
  { url: 'https://0x7f.1/hook', why: 'hex short-form IPv4' },
  { url: 'https://127.1/hook', why: 'short-form IPv4' },
  { url: 'https://10.0.0.5/hook', why: 'private IPv4 literal' },
  { url: 'https://169.254.169.254/latest/meta-data', why: 'cloud metadata literal' },
  { url: `https://${PUBLIC_V4}/hook`, why: 'even a public IP literal' },
  { url: 'https://[::1]/hook', why: 'IPv6 loopback literal' },
  { url: 'https://[::ffff:127.0.0.1]/hook', why: 'IPv4-mapped loopback literal' },
  { url: 'https://[fd00:ec2::254]/hook', why: 'AWS IPv6 metadata literal' },
  // Local names.
  { url: 'https://localhost/hook', why: 'localhost' },
  { url: 'https://LOCALHOST./hook', why: 'localhost, upper case with a trailing dot' },
  { url: 'https://api.localhost/hook', why: 'a *.localhost name' },
  // Names resolving to forbidden space.
  resolvingTo('127.0.0.1', 'loopback'),
  resolvingTo('127.255.0.9', 'loopback'),
  resolvingTo('10.1.2.3', 'private 10/8'),
  resolvingTo('172.16.0.1', 'private 172.16/12'),
  resolvingTo('172.31.255.254', 'private 172.16/12'),
  resolvingTo('192.168.1.1', 'private 192.168/16'),
  resolvingTo('169.254.169.254', 'cloud metadata (link-local)'),
  resolvingTo('169.254.0.1', 'link-local'),
  resolvingTo('100.64.0.1', 'CGNAT'),
  resolvingTo('100.100.100.200', 'Alibaba metadata (CGNAT)'),
  resolvingTo('0.0.0.0', 'this network'),
  resolvingTo('0.1.2.3', '0/8'),
  resolvingTo('192.0.0.170', '192.0.0/24'),
  resolvingTo('198.18.0.1', 'benchmarking'),
  resolvingTo('198.19.255.1', 'benchmarking'),
  resolvingTo('192.0.2.10', 'TEST-NET-1'),
  resolvingTo('198.51.100.7', 'TEST-NET-2'),
  resolvingTo('203.0.113.9', 'TEST-NET-3'),
  resolvingTo('224.0.0.1', 'multicast'),
  resolvingTo('239.255.255.250', 'multicast'),
  resolvingTo('240.0.0.1', '240/4'),
  resolvingTo('255.255.255.255', 'broadcast'),
  resolvingTo('::1', 'IPv6 loopback'),
  resolvingTo('::', 'IPv6 unspecified'),
  resolvingTo('fc00::1', 'IPv6 ULA'),
  resolvingTo('fd12:3456::1', 'IPv6 ULA'),
  resolvingTo('fd00:ec2::254', 'AWS IPv6 metadata'),
  resolvingTo('fe80::1', 'IPv6 link-local'),
  resolvingTo('ff02::1', 'IPv6 multicast'),
  resolvingTo('2001:db8::1', 'IPv6 documentation'),
  resolvingTo('::ffff:10.0.0.1', 'IPv4-mapped private'),
  resolvingTo('::ffff:169.254.169.254', 'IPv4-mapped metadata'),
  resolvingTo('64:ff9b::a00:1', 'NAT64 of 10.0.0.1'),
  resolvingTo('64:ff9b::7f00:1', 'NAT64 of 127.0.0.1'),
  resolvingTo('2002:a9fe:a9fe::1', '6to4 of 169.254.169.254'),
  resolvingTo('2002:c0a8:101::', '6to4 of 192.168.1.1'),
  resolvingTo('2001::1', 'Teredo'),
  { url: 'https://split.example.net/hook', resolvesTo: [PUBLIC_V4, '10.0.0.7'], why: 'one public and one private address' },
  { url: 'https://split6.example.net/hook', resolvesTo: [PUBLIC_V6, 'fe80::2'], why: 'public IPv6 and link-local' },
];

export const PUBLIC_DESTINATIONS: readonly DestinationCase[] = [
  { url: 'https://example.com/hook', resolvesTo: [PUBLIC_V4], why: 'a public name' },
  { url: 'https://example.com:443/hook?token=abc', resolvesTo: [PUBLIC_V4], why: 'explicit 443 and a query' },
  { url: 'https://hooks.example.org/a/b', resolvesTo: [PUBLIC_V4, PUBLIC_V6], why: 'public IPv4 and IPv6' },
  { url: 'https://v6only.example.org/', resolvesTo: [PUBLIC_V6], why: 'public IPv6 only' },
  { url: 'https://nat64.example.org/', resolvesTo: [`64:ff9b::${'5db8:d70e'}`], why: 'NAT64 of a public IPv4' },
  { url: 'https://EXAMPLE.com/Hook', resolvesTo: [PUBLIC_V4], why: 'upper-case host' },
];

/** A resolver answering from the cases (unknown names fail like NXDOMAIN). */
export function caseResolver(cases: readonly DestinationCase[]): (hostname: string) => Promise<string[]> {
  const table = new Map<string, string[]>();
  for (const c of cases) {
    try {
      const host = new URL(c.url).hostname.toLowerCase();
      if (c.resolvesTo) table.set(host, c.resolvesTo);
    } catch {
      // a malformed URL has no host to resolve
    }
  }
  return async (hostname) => {
    const addresses = table.get(hostname.toLowerCase());
    if (!addresses) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
    return addresses;
  };
}
