import { sleep } from '../../common/infra';
import { API_RATE, MAX_IN_FLIGHT, MAX_RUN_MS } from '../options';
import { Stack } from './stack';

export interface RequestRecord {
  start: number;
  end: number;
  route: string;
  /** The gateway it went to. */
  gateway: string;
  /** `200`, `HTTP 503`, `connection error (ECONNREFUSED)`, `timeout`, … */
  outcome: string;
  ok: boolean;
}

const METERED = new Set(['/auctions', '/auctions/live', '/auctions/:id/bids', '/stats']);

/** The API load: a fixed mix at a fixed rate (open loop), at most MAX_IN_FLIGHT at once. */
export class ApiLoad {
  readonly records: RequestRecord[] = [];
  /** Responses the gateway must have counted against the load account (metered route, 2xx or 404). */
  countedByClient = 0;
  private readonly knownAuctionIds: string[] = [];
  private readonly mix: { route: string; key: boolean; path: () => string }[] = [
    { route: '/auctions', key: true, path: () => '/auctions?limit=10' },
    { route: '/auctions/live', key: true, path: () => '/auctions/live?limit=10' },
    { route: '/auctions', key: true, path: () => '/auctions?make=Porsche&limit=5' },
    { route: '/makes', key: false, path: () => '/makes' },
    { route: '/stats', key: true, path: () => '/stats?make=Porsche' },
    { route: '/models', key: false, path: () => '/models?make=Porsche' },
    { route: '/auctions/:id/bids', key: true, path: () => `/auctions/${this.knownAuctionIds[Math.floor(Math.random() * this.knownAuctionIds.length)] ?? '1'}/bids` },
    { route: '/auctions/live', key: true, path: () => '/auctions/live?make=Jaguar&limit=5' },
  ];
  private inFlight = 0;
  private running = true;
  private loop: Promise<void> = Promise.resolve();

  constructor(
    private readonly stack: Stack,
    private readonly loadKey: string,
  ) {}

  countIfMetered(route: string, status: number | null): void {
    if (METERED.has(route) && status !== null && (status < 400 || status === 404)) this.countedByClient += 1;
  }

  private harvest(body: string): void {
    try {
      for (const row of (JSON.parse(body) as { data?: { id?: string }[] }).data ?? []) {
        if (row.id && !this.knownAuctionIds.includes(row.id)) this.knownAuctionIds.push(row.id);
      }
      this.knownAuctionIds.splice(0, Math.max(0, this.knownAuctionIds.length - 50));
    } catch {
      // not a list
    }
  }

  start(): void {
    this.loop = (async () => {
      const t0 = Date.now();
      for (let i = 0; this.running && Date.now() - t0 < MAX_RUN_MS; i += 1) {
        const wait = t0 + (i * 1000) / API_RATE - Date.now();
        if (wait > 0) await sleep(wait);
        const entry = this.mix[i % this.mix.length];
        const record: RequestRecord = { start: Date.now(), end: 0, route: entry.route, gateway: '', outcome: '', ok: false };
        this.records.push(record);
        if (this.inFlight >= MAX_IN_FLIGHT) {
          record.outcome = 'not sent (client at its in-flight cap)';
          continue;
        }
        this.inFlight += 1;
        void this.stack.send(entry.path(), entry.key ? this.loadKey : null).then((answer) => {
          this.inFlight -= 1;
          record.end = Date.now();
          record.gateway = answer.slot?.label ?? '';
          record.outcome = answer.outcome;
          record.ok = answer.status === 200 || (answer.status === 404 && entry.route === '/auctions/:id/bids');
          this.countIfMetered(entry.route, answer.status);
          if (answer.status === 200 && entry.route.startsWith('/auctions') && !entry.route.includes('bids')) this.harvest(answer.body);
        });
      }
    })();
  }

  /** No new request; the ones in flight answered (20 s at most). */
  async stop(): Promise<void> {
    this.running = false;
    await this.loop;
    for (let i = 0; i < 200 && this.inFlight > 0; i += 1) await sleep(100);
  }
}
