import { sleep } from '../../common/infra';
import { isRunning, statusOf } from '../../common/processes';
import { RECOVERY_TIMEOUT_MS, REQUEST_TIMEOUT_MS } from '../options';
import { ApiLoad } from './api-load';
import { Ingest } from './ingest';
import { Drill } from './prepare';
import { readyUrl, Stack } from './stack';

/**
 * Recovered: every app ready, API probes answered by every gateway, the first auction published
 * after a given moment delivered (its auction.created arrived at /all).
 */
export class Recovery {
  /** The first arrival of each auction's auction.created at /all. */
  private readonly createdArrivals = new Map<string, number>();
  private scanned = 0;

  constructor(
    private readonly drill: Drill,
    private readonly stack: Stack,
    private readonly load: ApiLoad,
    private readonly ingest: Ingest,
  ) {}

  private scanArrivals(): void {
    const arrivals = this.drill.arrivals;
    for (; this.scanned < arrivals.length; this.scanned += 1) {
      const a = arrivals[this.scanned];
      if (a.path === '/all' && a.type === 'auction.created' && a.subject && !this.createdArrivals.has(a.subject)) this.createdArrivals.set(a.subject, a.at);
    }
  }

  private async recovered(since: number): Promise<boolean> {
    const { slots } = this.stack;
    for (const slot of slots) {
      if (!isRunning(slot.child) || (await statusOf(readyUrl(slot.port))) !== 200) return false;
      if (slot.app === 'gateway' && !slot.inRotation) return false;
    }
    for (const slot of this.stack.gateways) {
      for (const [path, key, route] of [
        ['/auctions?limit=1', this.drill.loadKey, '/auctions'],
        ['/stats?make=Porsche', this.drill.loadKey, '/stats'],
        ['/webhooks', this.drill.hooksKey, '/webhooks'],
      ] as const) {
        try {
          const res = await fetch(`http://127.0.0.1:${slot.port}${path}`, { headers: { authorization: `Bearer ${key}` }, signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) });
          await res.arrayBuffer();
          this.load.countIfMetered(route, res.status);
          if (res.status !== 200) return false;
        } catch {
          return false;
        }
      }
    }
    const { stream } = this.ingest;
    const n = stream.createdAt.findIndex((at) => at >= since);
    if (n < 0) return stream.exhausted; // --max-auctions reached: no auction left to follow
    this.scanArrivals();
    return this.createdArrivals.has(stream.url(n));
  }

  /** When the system recovered from what happened at `since`, or null after RECOVERY_TIMEOUT_MS. */
  async waitRecovered(since: number): Promise<number | null> {
    const deadline = since + RECOVERY_TIMEOUT_MS;
    while (Date.now() < deadline) {
      if (await this.recovered(since)) return Date.now();
      await sleep(200);
    }
    return null;
  }
}
