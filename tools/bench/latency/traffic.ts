import { createServer, IncomingMessage, Server } from 'node:http';
import { AddressInfo } from 'node:net';
import { setImmediate as turn } from 'node:timers/promises';
import { connect, ChannelModel, ConfirmChannel } from 'amqplib';
import { buildEventEnvelope, Queues } from '@cars/contracts';
import { assertObservationTopology } from '@cars/messaging';
import { webhookHeaders } from '@cars/signing';
import { Pool } from 'undici';
import { observation } from '../common/delivery-path';

/** This process's epoch clock in ms, sub-millisecond (the database's timestamps are converted to it). */
export const clock = (): number => performance.timeOrigin + performance.now();

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The source auction id a webhook body is about: the last segment of `data.auction.url`. */
export function auctionIdOf(body: string): string | null {
  try {
    const url = (JSON.parse(body) as { data?: { auction?: { url?: unknown } } }).data?.auction?.url;
    return typeof url === 'string' ? url.slice(url.lastIndexOf('/') + 1) : null;
  } catch {
    return null;
  }
}

/** One arrival at the receiver. */
export interface Arrival {
  /** When the request's headers were in (this process's clock). */
  at: number;
  /** The `webhook-id` header: the event id. */
  eventId: string;
}

/**
 * The loopback webhook receiver: answers 200 to everything and reads every body, noting by the
 * source auction id it names when its first request arrived (headers parsed) and how many came.
 */
export class Receiver {
  readonly arrivals = new Map<string, Arrival>();
  duplicates = 0;
  private server?: Server;
  url = '';

  async start(): Promise<void> {
    this.server = createServer((req: IncomingMessage, res) => {
      const at = clock();
      const eventId = String(req.headers['webhook-id'] ?? '');
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const id = auctionIdOf(Buffer.concat(chunks).toString('utf8'));
        if (id !== null) {
          if (this.arrivals.has(id)) this.duplicates += 1;
          else this.arrivals.set(id, { at, eventId });
        }
        res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
      });
    });
    this.server.keepAliveTimeout = 60_000;
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/hook`;
  }

  /** Resolves true once every id has arrived, false at the deadline (ms, this process's clock). */
  async awaitAll(ids: readonly string[], deadline: number): Promise<boolean> {
    let missing = ids.filter((id) => !this.arrivals.has(id));
    while (missing.length > 0) {
      if (clock() > deadline) return false;
      await sleep(20);
      missing = missing.filter((id) => !this.arrivals.has(id));
    }
    return true;
  }

  close(): void {
    this.server?.closeAllConnections();
    this.server?.close();
  }
}

/** What one paced run sent: source auction id → when it was handed over (this process's clock). */
export interface Sent {
  at: Map<string, number>;
  /** Achieved rate over the run (per second). */
  achieved: number;
}

/**
 * Sends `count` items at `rate` per second, open loop: item i is due at start + i / rate; a late
 * item goes at once (its own send time is recorded, not the due time). Between sends the event loop
 * turns, so the receiver in this process is never starved by a publisher catching up.
 */
async function paced(count: number, rate: number, send: (i: number) => Promise<void> | void): Promise<number> {
  const interval = 1000 / rate;
  const started = clock();
  for (let i = 0; i < count; i += 1) {
    const wait = started + i * interval - clock();
    if (wait > 1) await sleep(wait);
    else await turn();
    await send(i);
  }
  return count / ((clock() - started) / 1000);
}

/**
 * The scraper's side: new live auctions (`observation(i)` of the common delivery path, a Bring a
 * Trailer listing `bench-<i>`) published to `observations` as tools/ingest publishes them —
 * persistent, JSON, on a confirm channel.
 */
export class ObservationPublisher {
  private connection?: ChannelModel;
  private channel?: ConfirmChannel;
  private next = 0;

  constructor(private readonly url: string) {}

  async start(): Promise<void> {
    this.connection = await connect(this.url, { noDelay: true });
    this.channel = await this.connection.createConfirmChannel();
    await assertObservationTopology(this.channel);
  }

  private async publish(sent: Map<string, number>): Promise<void> {
    const item = observation(this.next);
    this.next += 1;
    const body = Buffer.from(JSON.stringify(item));
    sent.set(item.source_auction_id, clock());
    if (!this.channel!.sendToQueue(Queues.Observations, body, { persistent: true, contentType: 'application/json' })) {
      await new Promise((resolve) => this.channel!.once('drain', resolve));
    }
  }

  /** `count` observations at `rate` per second (Infinity: as fast as the channel takes them); every one confirmed. */
  async run(count: number, rate: number): Promise<Sent> {
    const sent = new Map<string, number>();
    const achieved = await paced(count, rate, () => this.publish(sent));
    await this.channel!.waitForConfirms();
    return { at: sent, achieved };
  }

  async close(): Promise<void> {
    await this.channel?.close().catch(() => undefined);
    await this.connection?.close().catch(() => undefined);
  }
}

let floorRequests = 0;

/**
 * The receiver's floor, same run: a bare undici keep-alive POST loop (the worker's per-endpoint
 * connection cap, 10) sending signed webhook bodies of the same shape straight to the same
 * receiver at the same rate, open loop; send → the receiver's first byte.
 */
export async function bareLoop(receiver: Receiver, count: number, rate: number, secret: string): Promise<{ ms: number[]; achieved: number }> {
  const url = new URL(receiver.url);
  const pool = new Pool(url.origin, { connections: 10, keepAliveTimeout: 30_000 });
  const sent = new Map<string, number>();
  const requests: Promise<void>[] = [];
  const achieved = await paced(count, rate, () => {
    floorRequests += 1;
    const id = `floor-${floorRequests}`;
    const body = JSON.stringify(
      buildEventEnvelope('auction.created', { auction: { url: `https://bringatrailer.com/listing/${id}`, title: '1973 Porsche 911 Carrera RS' }, changes: {} } as never, new Date()),
    );
    const headers = webhookHeaders({ msgId: `evt_${id}`, timestamp: new Date(), body, secrets: [secret] });
    sent.set(id, clock());
    requests.push(
      pool
        .request({ path: url.pathname, method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body })
        .then((res) => res.body.text())
        .then(() => undefined),
    );
  });
  await Promise.all(requests);
  await pool.close();
  const ms: number[] = [];
  for (const [id, at] of sent) {
    const arrival = receiver.arrivals.get(id);
    if (arrival) ms.push(arrival.at - at);
  }
  return { ms, achieved };
}
