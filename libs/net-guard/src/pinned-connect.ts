import type { LookupAddress, LookupOneOptions } from 'node:dns';
import type { ConnectionOptions } from 'node:tls';
import { buildConnector } from 'undici';
import { isForbiddenAddress } from './addresses';

export interface PinnedConnectOptions {
  /** The address `resolveForConnect` checked for this attempt. */
  address: string;
  family: 4 | 6;
  allowPrivate: boolean;
  /** TLS options (e.g. `ca` for a test receiver). */
  tls?: ConnectionOptions;
  timeoutMs?: number;
}

/** The error a connection to anything but the checked, allowed address fails with. */
export class DestinationBlockedError extends Error {
  readonly code = 'DESTINATION_BLOCKED';
}

/**
 * An undici `connect` that goes only to the address checked for this attempt: the socket's DNS
 * lookup answers with that address (no second resolution between check and connect), TLS keeps the
 * URL's host name for SNI and certificate checks and undici sends it as `Host`; once connected,
 * the socket's remote address is verified again. Anything else is destroyed with
 * `DestinationBlockedError` before a byte of the request is written.
 */
export function pinnedConnect(options: PinnedConnectOptions): buildConnector.connector {
  const { address, family } = options;
  const lookup = (
    _hostname: string,
    lookupOptions: LookupOneOptions & { all?: boolean },
    callback: (error: Error | null, address: string | LookupAddress[], family?: number) => void,
  ) => {
    if (lookupOptions?.all) callback(null, [{ address, family }]);
    else callback(null, address, family);
  };
  const base = buildConnector({ ...(options.tls ?? {}), timeout: options.timeoutMs ?? 10_000, lookup } as buildConnector.BuildOptions);
  return (connectOptions, callback) => {
    // Never even open a TCP connection to forbidden space.
    if (!options.allowPrivate && isForbiddenAddress(address)) {
      return callback(new DestinationBlockedError(`${address} is not a public address`), null);
    }
    return base(connectOptions, (error, socket) => {
      if (error || !socket) return callback(error ?? new Error('no socket'), null);
      const remote = socket.remoteAddress?.replace(/^::ffff:(?=\d)/, '');
      const expected = address.replace(/^::ffff:(?=\d)/, '');
      if (remote !== expected || (!options.allowPrivate && isForbiddenAddress(remote))) {
        socket.destroy();
        return callback(new DestinationBlockedError(`connected to ${remote ?? 'an unknown address'}, not the checked ${address}`), null);
      }
      return callback(null, socket);
    });
  };
}
