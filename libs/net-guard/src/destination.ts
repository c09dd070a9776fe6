import { lookup } from 'node:dns/promises';
import { isForbiddenAddress, isIpLiteral } from './addresses';

/** Every address (IPv4 and IPv6) a host name resolves to. */
export type Resolver = (hostname: string) => Promise<string[]>;

export const systemResolver: Resolver = async (hostname) =>
  (await lookup(hostname, { all: true, verbatim: true })).map((entry) => entry.address);

export interface DestinationPolicy {
  /**
   * WEBHOOK_ALLOW_PRIVATE_DESTINATIONS: local receivers (development, tests) — relaxes the address,
   * scheme and port rules; never the default in production manifests.
   */
  allowPrivate: boolean;
  resolver: Resolver;
}

export type DestinationRejectionReason =
  | 'invalid_url'
  | 'scheme'
  | 'port'
  | 'credentials'
  | 'fragment'
  | 'forbidden_host'
  | 'forbidden_address';

export interface DestinationRejection {
  ok: false;
  reason: DestinationRejectionReason;
  message: string;
}

export type DestinationCheck = { ok: true; url: URL; addresses: string[] } | DestinationRejection;

const reject = (reason: DestinationRejectionReason, message: string): DestinationRejection => ({ ok: false, reason, message });

/** `localhost`, `*.localhost` (RFC 6761), with or without the trailing dot. */
function isLocalhostName(hostname: string): boolean {
  const name = hostname.toLowerCase().replace(/\.$/, '');
  return name === 'localhost' || name.endsWith('.localhost');
}

/**
 * A subscription's URL, at create and update time (docs/api/webhooks.md, "The destination"): parsed
 * by WHATWG URL; `https:` on port 443 only; no credentials, no fragment; the host a public name —
 * no IP literal of any spelling, not `localhost`, and every address it resolves to public. A name
 * that does not resolve now is accepted (the worker fails it as `dns_error` until it does).
 */
export async function checkDestination(raw: string, policy: DestinationPolicy): Promise<DestinationCheck> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return reject('invalid_url', 'url must be an absolute URL such as https://example.com/webhooks');
  }
  if (url.protocol !== 'https:' && !(policy.allowPrivate && url.protocol === 'http:')) {
    return reject('scheme', 'url must use https');
  }
  if (url.username !== '' || url.password !== '') return reject('credentials', 'url must not contain credentials');
  if (raw.includes('#')) return reject('fragment', 'url must not contain a fragment');
  if (!policy.allowPrivate && url.port !== '') return reject('port', 'url must use the default https port 443');
  const hostname = url.hostname;
  if (!policy.allowPrivate) {
    if (isIpLiteral(hostname)) return reject('forbidden_host', 'url must name a host, not an IP address');
    if (isLocalhostName(hostname)) return reject('forbidden_host', 'url must not point to localhost');
  }
  let addresses: string[];
  try {
    addresses = isIpLiteral(hostname) ? [hostname.replace(/^\[|\]$/g, '')] : await policy.resolver(hostname);
  } catch {
    return { ok: true, url, addresses: [] };
  }
  if (!policy.allowPrivate && addresses.some(isForbiddenAddress)) {
    return reject('forbidden_address', 'url must resolve to public addresses only');
  }
  return { ok: true, url, addresses };
}

export type ConnectTarget =
  | { ok: true; address: string; family: 4 | 6 }
  | { ok: false; code: 'dns_error' | 'destination_blocked'; message: string };

/**
 * At connect time, for every attempt: resolve the host again and check every address (a name
 * that started resolving to a private address is blocked without connecting); the caller then
 * connects to the returned address only, keeping the host name for TLS SNI and `Host`.
 */
export async function resolveForConnect(url: URL, policy: DestinationPolicy): Promise<ConnectTarget> {
  const hostname = url.hostname.replace(/^\[|\]$/g, '');
  let addresses: string[];
  if (isIpLiteral(hostname)) {
    addresses = [hostname];
  } else {
    try {
      addresses = await policy.resolver(hostname);
    } catch (error) {
      return { ok: false, code: 'dns_error', message: `${hostname} does not resolve (${(error as { code?: string }).code ?? 'error'})` };
    }
  }
  if (addresses.length === 0) return { ok: false, code: 'dns_error', message: `${hostname} has no address` };
  if (!policy.allowPrivate && (isIpLiteral(hostname) || isLocalhostName(hostname) || addresses.some(isForbiddenAddress))) {
    return { ok: false, code: 'destination_blocked', message: `${hostname} resolves to a non-public address` };
  }
  const address = addresses[0];
  return { ok: true, address, family: address.includes(':') ? 6 : 4 };
}
