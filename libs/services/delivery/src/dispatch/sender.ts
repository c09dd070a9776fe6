import { Inject, Injectable, OnApplicationShutdown } from '@nestjs/common';
import { pinnedConnect, resolveForConnect, systemResolver } from '@cars/net-guard';
import { DELIVERY_RESPONSE_EXCERPT_BYTES } from '@cars/contracts';
import { Dispatcher, Pool } from 'undici';
import { DELIVERY_OPTIONS, ResolvedDeliveryOptions } from '../config/delivery.options';
import { AttemptOutcome, errorCodeOf, outcomeOfResponse } from './attempt-outcome';

export const USER_AGENT = 'ClassicCarAuctionData-Webhooks/1.0 (+https://docs.classic-car-auction-data.example/webhooks)';

/** Pools unused for this long are closed. */
const POOL_IDLE_MS = 5 * 60_000;

/**
 * One POST per attempt through undici keep-alive pools, one per destination origin *and* checked
 * address: every attempt resolves the host again and checks every address (net-guard), and the
 * pool it uses connects only to that address — TLS SNI, the certificate check and `Host` keep the
 * name. A name that now resolves to private space fails as `destination_blocked` without a
 * connection. Redirects are not followed; the whole attempt is bounded by the receiver timeout.
 */
@Injectable()
export class Sender implements OnApplicationShutdown {
  private readonly pools = new Map<string, { pool: Pool; usedAt: number }>();
  private lastSweep = Date.now();

  constructor(@Inject(DELIVERY_OPTIONS) private readonly options: ResolvedDeliveryOptions) {}

  async send(rawUrl: string, headers: Record<string, string>, body: string): Promise<AttemptOutcome> {
    const started = performance.now();
    const failed = (error: AttemptOutcome['error']) => failedAttempt(error, started);
    let url: URL;
    try {
      url = new URL(rawUrl);
    } catch {
      return failed('destination_blocked');
    }
    const policy = { allowPrivate: this.options.allowPrivateDestinations, resolver: this.options.resolver ?? systemResolver };
    const target = await resolveForConnect(url, policy);
    if (!target.ok) return failed(target.code);
    const pool = this.poolFor(url, target.address, target.family);
    return exchange(pool, {
      path: `${url.pathname}${url.search}`,
      headers: [...flatHeaders(headers), 'content-type', 'application/json', 'user-agent', USER_AGENT],
      body,
      timeoutMs: this.options.receiverTimeoutMs,
      started,
    });
  }

  private poolFor(url: URL, address: string, family: 4 | 6): Pool {
    const key = `${url.origin}|${address}`;
    const now = Date.now();
    if (now - this.lastSweep > POOL_IDLE_MS) this.closeIdle(now);
    let entry = this.pools.get(key);
    if (!entry) {
      entry = {
        pool: new Pool(url.origin, {
          connect: pinnedConnect({
            address,
            family,
            allowPrivate: this.options.allowPrivateDestinations,
            tls: this.options.tls,
            timeoutMs: this.options.receiverTimeoutMs,
          }),
          connections: this.options.perEndpointConcurrency,
          keepAliveTimeout: 30_000,
          pipelining: 1,
        }),
        usedAt: now,
      };
      this.pools.set(key, entry);
    }
    entry.usedAt = now;
    return entry.pool;
  }

  private closeIdle(now: number): void {
    this.lastSweep = now;
    for (const [key, entry] of this.pools) {
      if (now - entry.usedAt > POOL_IDLE_MS) {
        this.pools.delete(key);
        void entry.pool.close().catch(() => undefined);
      }
    }
  }

  async onApplicationShutdown(): Promise<void> {
    await Promise.all([...this.pools.values()].map((entry) => entry.pool.close().catch(() => undefined)));
    this.pools.clear();
  }
}

function failedAttempt(error: AttemptOutcome['error'], started: number): AttemptOutcome {
  return { succeeded: false, status: null, error, excerpt: null, durationMs: performance.now() - started };
}

function flatHeaders(headers: Record<string, string>): string[] {
  const flat: string[] = [];
  for (const name in headers) flat.push(name, headers[name]);
  return flat;
}

/** What the attempt ran out of time on: the whole exchange, not only the wait for headers. */
class AttemptTimeout extends Error {
  override readonly name = 'TimeoutError';
}

/**
 * One POST on the pool, the response read into at most the excerpt's bytes (the rest read and
 * dropped, so the connection stays reusable). The whole exchange — waiting for a connection,
 * sending, the headers and every byte of the body — is bounded by `timeoutMs` with one timer,
 * whatever the receiver trickles. Through undici's dispatch handler rather than `request`: no
 * stream, abort signal or async iterator per attempt (the sender's largest cost per delivery).
 */
function exchange(
  pool: Pool,
  request: { path: string; headers: string[]; body: string; timeoutMs: number; started: number },
): Promise<AttemptOutcome> {
  return new Promise((resolve) => {
    let settled = false;
    let controller: Dispatcher.DispatchController | null = null;
    let status = 0;
    const chunks: Buffer[] = [];
    let size = 0;
    const settle = (outcome: AttemptOutcome) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(outcome);
    };
    const timer = setTimeout(() => {
      settle(failedAttempt('timeout', request.started));
      controller?.abort(new AttemptTimeout('the receiver did not answer in time'));
    }, request.timeoutMs);
    const handler: Dispatcher.DispatchHandler = {
      onRequestStart(started) {
        controller = started;
        // Out of time while it waited for a connection.
        if (settled) started.abort(new AttemptTimeout('the receiver did not answer in time'));
      },
      onResponseStart(_controller, statusCode) {
        status = statusCode;
      },
      onResponseData(_controller, chunk) {
        if (size < DELIVERY_RESPONSE_EXCERPT_BYTES + 4) {
          chunks.push(chunk);
          size += chunk.length;
        }
      },
      onResponseEnd() {
        settle(outcomeOfResponse(status, chunks.length === 1 ? chunks[0] : Buffer.concat(chunks), performance.now() - request.started));
      },
      onResponseError(_controller, error) {
        settle(failedAttempt(errorCodeOf(error), request.started));
      },
    };
    try {
      pool.dispatch(
        {
          path: request.path,
          method: 'POST',
          headers: request.headers,
          body: request.body,
          headersTimeout: request.timeoutMs,
          bodyTimeout: request.timeoutMs,
        },
        handler,
      );
    } catch (error) {
      settle(failedAttempt(errorCodeOf(error), request.started));
    }
  });
}
