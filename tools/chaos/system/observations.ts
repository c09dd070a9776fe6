import { randomUUID } from 'node:crypto';
import { Queues } from '@cars/contracts';
import { assertObservationTopology, connectToAny } from '@cars/messaging';
import { ConfirmChannel } from 'amqplib';
import { state } from './cleanup';
import { MAX_AUCTIONS, STEP_MS } from './options';

/**
 * Observations to the `observations` queue over a confirm channel that reconnects by itself: a
 * message the broker did not confirm before the connection went is published again (a duplicate
 * observation, which the change-detector must absorb).
 */
export class ObservationPublisher {
  private channel: ConfirmChannel | null = null;
  private connecting = false;
  private lastAttempt = 0;
  private readonly queue: Buffer[] = [];
  private readonly unconfirmed = new Set<Buffer>();
  /** Each message's id, the same when it is published again after a lost connection. */
  private readonly ids = new WeakMap<Buffer, string>();
  republished = 0;

  constructor(private readonly url: string) {}

  publish(body: Buffer): void {
    this.ids.set(body, randomUUID());
    this.queue.push(body);
    this.flush();
  }

  get outstanding(): number {
    return this.queue.length + this.unconfirmed.size;
  }

  flush(): void {
    if (!this.channel) {
      void this.reconnect();
      return;
    }
    const channel = this.channel;
    while (this.queue.length > 0 && this.channel === channel) {
      const body = this.queue.shift()!;
      this.unconfirmed.add(body);
      try {
        channel.sendToQueue(Queues.Observations, body, { persistent: true, contentType: 'application/json', messageId: this.ids.get(body) }, (error) => {
          if (!this.unconfirmed.delete(body)) return; // already handed back when the channel went
          if (error) this.queue.push(body);
        });
      } catch {
        this.unconfirmed.delete(body);
        this.queue.unshift(body);
        this.lost(channel);
      }
    }
  }

  private lost(channel: ConfirmChannel): void {
    if (this.channel !== channel) return;
    this.channel = null;
    this.republished += this.unconfirmed.size;
    this.queue.unshift(...this.unconfirmed);
    this.unconfirmed.clear();
  }

  private async reconnect(): Promise<void> {
    if (this.connecting || Date.now() - this.lastAttempt < 500 || state.finishing) return;
    this.connecting = true;
    this.lastAttempt = Date.now();
    try {
      const connection = await connectToAny(this.url);
      connection.on('error', () => undefined);
      const channel = await connection.createConfirmChannel();
      channel.on('error', () => undefined);
      const lost = () => this.lost(channel);
      connection.on('close', lost);
      channel.on('close', lost);
      await assertObservationTopology(channel);
      this.channel = channel;
      this.closeConnection = () => connection.close().catch(() => undefined);
    } catch {
      // the broker is away: the next flush tries again
    } finally {
      this.connecting = false;
    }
    this.flush();
  }

  closeConnection: () => Promise<unknown> = async () => undefined;
}

const MAKES: [string, string][] = [
  ['Porsche', '911'],
  ['Chevrolet', 'Corvette'],
  ['Jaguar', 'E-Type'],
];

/** A source wall-clock time (no offset). */
const wallClock = (ms: number) => new Date(ms).toISOString().slice(0, 19);

/**
 * The observation stream: each auction is observed three times — new (active, one bid), updated
 * STEP_MS later (price and bid count up, a second bid) and ended 2 × STEP_MS later (sold). Every
 * auction and every bid is new to the database, so every one is eligible.
 */
export class ObservationStream {
  readonly createdAt: number[] = [];
  private readonly due: { at: number; n: number; step: 1 | 2 }[] = [];
  private creating = true;
  private credit = 0;
  private last = Date.now();
  published = 0;

  constructor(
    private readonly tag: string,
    private readonly publisher: ObservationPublisher,
    private readonly rate: number,
  ) {}

  key(n: number): string {
    return `${this.tag}-${n}`;
  }

  url(n: number): string {
    return `https://bringatrailer.com/listing/${this.key(n)}`;
  }

  stopCreating(): void {
    this.creating = false;
  }

  /** Every auction --max-auctions allows is created. */
  get exhausted(): boolean {
    return this.createdAt.length >= MAX_AUCTIONS;
  }

  get done(): boolean {
    return !this.creating && this.due.length === 0;
  }

  private observation(n: number, step: 0 | 1 | 2): Buffer {
    const [make, model] = MAKES[n % MAKES.length];
    const base = 20_000 + (n % 500) * 1000;
    const price = step === 0 ? base : base + 1000;
    const created = this.createdAt[n];
    const bid = (i: number) => ({
      source_bid_id: `${this.key(n)}-b${i}`,
      bidder_name: `bidder${i}`,
      amount: i === 1 ? base : base + 1000,
      currency: 'USD',
      bid_at: wallClock(created + (i - 1) * STEP_MS),
    });
    return Buffer.from(
      JSON.stringify({
        source: 'bringatrailer',
        source_auction_id: this.key(n),
        observed_at: new Date().toISOString(),
        auction: {
          url: this.url(n),
          title: `${1960 + (n % 30)} ${make} ${model} ${this.key(n)}`,
          status: step === 2 ? 'sold' : 'active',
          price,
          currency: 'USD',
          year: 1960 + (n % 30),
          make,
          model,
          auction_end_at: wallClock(created + 7 * 24 * 3600_000),
          bid_count: step === 0 ? 1 : 2,
          sale_type: 'auction',
          price_type: 'bid',
        },
        bids: step === 0 ? [bid(1)] : [bid(1), bid(2)],
      }),
    );
  }

  /** Publishes what is due: updates and ends first, then new auctions at a third of the rate. */
  tick(): void {
    const now = Date.now();
    while (this.due.length > 0 && this.due[0].at <= now) {
      const { n, step } = this.due.shift()!;
      this.publisher.publish(this.observation(n, step));
      this.published += 1;
      if (step === 1) this.due.push({ at: this.createdAt[n] + 2 * STEP_MS, n, step: 2 });
    }
    this.credit = Math.min(this.credit + ((now - this.last) / 1000) * (this.rate / 3), this.rate);
    this.last = now;
    while (this.creating && this.credit >= 1 && this.createdAt.length < MAX_AUCTIONS) {
      this.credit -= 1;
      const n = this.createdAt.length;
      this.createdAt.push(Date.now());
      this.publisher.publish(this.observation(n, 0));
      this.published += 1;
      this.due.push({ at: this.createdAt[n] + STEP_MS, n, step: 1 });
    }
    if (this.createdAt.length >= MAX_AUCTIONS) this.creating = false;
    this.publisher.flush();
  }
}
