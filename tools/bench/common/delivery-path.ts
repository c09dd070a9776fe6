import { createServer, IncomingMessage, Server } from 'node:http';
import { AddressInfo } from 'node:net';
import { INestApplicationContext, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { buildEventEnvelope, Observation } from '@cars/contracts';
import { DatabaseModule } from '@cars/persistence';
import { DeliveryModule } from '@cars/service-delivery';
import { liveObservation } from '@cars/testing';
import type { ObservationProcessor } from '@cars/service-change-detector';
import { DataSource } from 'typeorm';

const silent = { log() {}, error() {}, warn() {}, debug() {}, verbose() {} };

/** The production delivery module in this process, with its production settings, driven by the database. */
export async function startDeliveryWorker(url: string, masterKey: string): Promise<INestApplicationContext> {
  @Module({
    imports: [
      DatabaseModule.forRoot({ url, poolSize: 10 }),
      DeliveryModule.forRoot({ databaseUrl: url, secretKeys: masterKey, allowPrivateDestinations: true }),
    ],
  })
  class WorkerRoot {}
  const worker = await NestFactory.createApplicationContext(WorkerRoot, { logger: silent });
  await worker.init();
  return worker;
}

/** Events written to the outbox in one statement, as the change-detector writes them (Porsche, Bring a Trailer). */
export async function insertEvents(db: DataSource, events: readonly ReturnType<typeof buildEventEnvelope>[]): Promise<void> {
  await db.query(
    `INSERT INTO events (id, type, api_version, created_at, payload, make, source)
     SELECT x.id, x.type, '2026-10-17', now(), x.payload::json, 'Porsche', 'bringatrailer'
       FROM unnest($1::text[], $2::text[], $3::text[]) AS x(id, type, payload)`,
    [events.map((e) => e.id), events.map((e) => e.type), events.map((e) => JSON.stringify(e))],
  );
}

/** A loopback webhook receiver answering 200 to everything, noting when each webhook-id first arrived. */
export interface Receiver {
  url: string;
  server: Server;
  /** webhook-id → when its request's headers arrived (ms, performance clock). */
  arrivals: Map<string, number>;
  count: number;
  onCount?: () => void;
}

export async function startReceiver(): Promise<Receiver> {
  const receiver = { arrivals: new Map<string, number>(), count: 0 } as Receiver;
  receiver.server = createServer((req: IncomingMessage, res) => {
    const at = performance.now();
    const id = String(req.headers['webhook-id'] ?? '');
    req.resume();
    req.on('end', () => {
      if (id && !receiver.arrivals.has(id)) receiver.arrivals.set(id, at);
      receiver.count += 1;
      res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
      receiver.onCount?.();
    });
  });
  receiver.server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => receiver.server.listen(0, '127.0.0.1', resolve));
  receiver.url = `http://127.0.0.1:${(receiver.server.address() as AddressInfo).port}/hook`;
  return receiver;
}

/** Resolves (with the moment) once the receiver has counted `count` requests. */
export function until(receiver: Receiver, count: number): Promise<number> {
  return new Promise((resolve) => {
    const check = () => {
      if (receiver.count >= count) {
        receiver.onCount = undefined;
        resolve(performance.now());
      }
    };
    receiver.onCount = check;
    check();
  });
}

/** A new Bring a Trailer auction, `bench-<i>`: its first observation makes an `auction.created`. */
export function observation(i: number): Observation {
  return liveObservation(`bench-${i}`, { title: `1973 Porsche 911 Carrera RS ${i}`, price: 100000 + i });
}

/**
 * Hands observations to the processor as the change-detector's consumer does: the first one of a
 * batch waits at most `maxWaitMs` for company, a batch is one transaction, `concurrency` at a time.
 */
export class ConsumerLikeBatches {
  private waiting: Observation[] = [];
  private timer: NodeJS.Timeout | undefined;
  private running = 0;
  private readonly settled = new Set<Promise<void>>();

  constructor(
    private readonly processor: ObservationProcessor,
    private readonly onCommitted: (observation: Observation) => void,
    private readonly maxWaitMs = 5,
    private readonly batchSize = 1000,
    private readonly concurrency = 2,
  ) {}

  submit(observation: Observation): void {
    this.waiting.push(observation);
    if (this.waiting.length >= this.batchSize) this.start();
    else this.timer ??= setTimeout(() => this.start(), this.maxWaitMs);
  }

  private start(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    while (this.running < this.concurrency && this.waiting.length > 0) {
      const batch = this.waiting.splice(0, this.batchSize);
      this.running += 1;
      const done = this.processor.processBatch(batch).then(() => {
        for (const observation of batch) this.onCommitted(observation);
      });
      this.settled.add(done);
      void done.finally(() => {
        this.settled.delete(done);
        this.running -= 1;
        if (this.waiting.length > 0) this.start();
      });
    }
  }

  /** Resolves once everything submitted is committed. */
  async idle(): Promise<void> {
    while (this.waiting.length > 0 || this.settled.size > 0) {
      if (this.waiting.length > 0 && this.running < this.concurrency) this.start();
      await Promise.race([...this.settled, new Promise((resolve) => setTimeout(resolve, this.maxWaitMs))]);
    }
  }
}
