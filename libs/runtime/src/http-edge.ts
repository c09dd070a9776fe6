import { createServer, RequestListener, Server, ServerOptions } from 'node:http';
import ipaddr from 'ipaddr.js';
import { registerDecorator } from 'class-validator';

/** The entries of a TRUSTED_PROXIES list: comma-separated, blanks ignored. */
export function trustedProxyEntries(list: string | undefined): string[] {
  return (list ?? '')
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '');
}

/** An IPv4 (four decimal parts) or IPv6 address, optionally with a /prefix in range. */
function isAddressOrRange(entry: string): boolean {
  const [address, prefix, ...rest] = entry.split('/');
  if (rest.length > 0) return false;
  const v4 = ipaddr.IPv4.isValidFourPartDecimal(address);
  if (!v4 && !ipaddr.IPv6.isValid(address)) return false;
  if (prefix === undefined) return true;
  if (!/^\d{1,3}$/.test(prefix)) return false;
  return Number(prefix) <= (v4 ? 32 : 128);
}

/** The entries of a TRUSTED_PROXIES list that are neither an address nor a CIDR range. */
export function invalidTrustedProxyEntries(list: string | undefined): string[] {
  return trustedProxyEntries(list).filter((entry) => !isAddressOrRange(entry));
}

/** A comma-separated list of IP addresses and CIDR ranges (an env setting: a bad entry fails the boot). */
export function IsAddressList(): PropertyDecorator {
  return (target, property) =>
    registerDecorator({
      name: 'isAddressList',
      target: target.constructor,
      propertyName: String(property),
      validator: {
        validate: (value: unknown) => value === undefined || (typeof value === 'string' && invalidTrustedProxyEntries(value).length === 0),
        defaultMessage: (args) =>
          `${args?.property} must be a comma-separated list of IP addresses and CIDR ranges, e.g. 10.0.0.0/8,127.0.0.1 ` +
          `(not an address or range: ${invalidTrustedProxyEntries(String(args?.value))
            .map((e) => JSON.stringify(e.slice(0, 60)))
            .join(', ')})`,
      },
    });
}

/**
 * How long an HTTP connection may take over each part of its life (ms). A request whose headers,
 * or whose whole request, take longer is answered 408 and its connection closed; a connection
 * silent for `idleMs` (no byte either way) is closed; an idle keep-alive connection is closed
 * after `keepAliveMs`. docs/operations.md ("The HTTP edge") has the values and why.
 */
export interface HttpTimeouts {
  headersMs: number;
  requestMs: number;
  keepAliveMs: number;
  idleMs: number;
}

export const DEFAULT_HTTP_TIMEOUTS: HttpTimeouts = { headersMs: 10_000, requestMs: 30_000, keepAliveMs: 5_000, idleMs: 60_000 };

/**
 * Node's options for a server that enforces `timeouts` (its keep-alive and idle timeouts are set
 * on the server: `applyHttpTimeouts`). Node checks the headers and request deadlines every
 * `connectionsCheckingInterval` (30 s by default, which would let a slow client overstay by that
 * much): here a quarter of the headers timeout, at most 1 s.
 */
export function httpServerOptions(timeouts: HttpTimeouts): ServerOptions {
  if (timeouts.headersMs > timeouts.requestMs) {
    throw new Error(`The headers timeout (${timeouts.headersMs} ms) must not exceed the request timeout (${timeouts.requestMs} ms)`);
  }
  return {
    headersTimeout: timeouts.headersMs,
    requestTimeout: timeouts.requestMs,
    keepAliveTimeout: timeouts.keepAliveMs,
    connectionsCheckingInterval: Math.max(10, Math.min(1000, Math.floor(timeouts.headersMs / 4))),
  };
}

/** Sets the timeouts that are properties of the server rather than options of its creation. */
export function applyHttpTimeouts(server: Server, timeouts: HttpTimeouts): Server {
  server.keepAliveTimeout = timeouts.keepAliveMs;
  server.headersTimeout = timeouts.headersMs;
  server.requestTimeout = timeouts.requestMs;
  // A socket silent this long is destroyed (Node's default when no 'timeout' listener takes it).
  server.setTimeout(timeouts.idleMs);
  return server;
}

/** A plain HTTP server with `timeouts` (the health ports). */
export function createTimedHttpServer(timeouts: HttpTimeouts, listener: RequestListener): Server {
  return applyHttpTimeouts(createServer(httpServerOptions(timeouts), listener), timeouts);
}
