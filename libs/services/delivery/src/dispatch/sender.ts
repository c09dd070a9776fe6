import { Inject, Injectable, OnApplicationShutdown } from '@nestjs/common';
import { pinnedConnect, resolveForConnect, systemResolver } from '@cars/net-guard';
import { DELIVERY_RESPONSE_EXCERPT_BYTES } from '@cars/contracts';
import { Pool } from 'undici';
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
    const elapsed = () => performance.now() - started;
    const failed = (error: AttemptOutcome['error']): AttemptOutcome => ({
      succeeded: false,
      status: null,
      error,
      excerpt: null,
      durationMs: elapsed(),
    });
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
    const signal = AbortSignal.timeout(this.options.receiverTimeoutMs);
    try {
      const response = await pool.request({
        path: `${url.pathname}${url.search}`,
        method: 'POST',
        headers: { ...headers, 'content-type': 'application/json', 'user-agent': USER_AGENT },
        body,
        signal,
        headersTimeout: this.options.receiverTimeoutMs,
        bodyTimeout: this.options.receiverTimeoutMs,
      });
      const chunks: Buffer[] = [];
      let size = 0;
      for await (const chunk of response.body) {
        if (size < DELIVERY_RESPONSE_EXCERPT_BYTES + 4) {
          chunks.push(chunk as Buffer);
          size += (chunk as Buffer).length;
        }
      }
      return outcomeOfResponse(response.statusCode, Buffer.concat(chunks), elapsed());
    } catch (error) {
      return failed(errorCodeOf(error));
    }
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
