import { randomUUID } from 'node:crypto';
import { Controller, INestMicroservice, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { ClientRMQ, MessagePattern, Payload } from '@nestjs/microservices';
import { RPC_QUEUE_OPTIONS } from '@cars/contracts';
import * as amqp from 'amqplib';
import { firstValueFrom, timeout } from 'rxjs';
import { RMQ_SOCKET_OPTIONS, rpcServerOptions } from './rmq.options';

const QUEUE = `rpc-drain.${randomUUID()}`;
const silent = { log() {}, error() {}, warn() {}, debug() {}, verbose() {} };

/**
 * A service whose every answer takes a while (150 ms of work), so requests are in flight when a
 * replica stops; each replica's instance counts the requests it has taken and answered.
 */
@Controller()
class SlowController {
  taken = 0;
  answered = 0;

  @MessagePattern('slow.echo')
  async echo(@Payload() data: { n: number }): Promise<{ n: number }> {
    this.taken += 1;
    await new Promise((resolve) => setTimeout(resolve, 150));
    this.answered += 1;
    return { n: data.n };
  }
}

/** Polls `done` until it holds, or fails after `timeoutMs`. */
async function until(done: () => boolean, what: () => string, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!done()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what()}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

const counts = (app: INestMicroservice) => app.get(SlowController);

@Module({ controllers: [SlowController] })
class SlowModule {}

async function replica(queue = QUEUE, redeliverOnCrash = false): Promise<INestMicroservice> {
  const app = await NestFactory.createMicroservice(SlowModule, {
    ...rpcServerOptions(process.env.RABBITMQ_URL!, queue, { prefetchCount: 8, redeliverOnCrash }),
    logger: silent,
  });
  await app.listen();
  return app;
}

function clientOf(queue: string): ClientRMQ {
  return new ClientRMQ({
    urls: [process.env.RABBITMQ_URL!],
    queue,
    queueOptions: RPC_QUEUE_OPTIONS,
    socketOptions: RMQ_SOCKET_OPTIONS,
    persistent: false,
  });
}

/** Drops the replica's broker connection at once, as a killed process would: no drain. */
async function crash(app: INestMicroservice): Promise<void> {
  const server = (app as unknown as { serverInstance: { server: { close(): Promise<void> } } }).serverInstance;
  await server.server.close();
}

/**
 * A rolling restart of an RPC service: one replica is closed while it holds requests it has taken
 * off the queue (auto-acknowledged). Every request must still be answered — by the stopping
 * replica before it goes, or by the other one — well inside the callers' timeout.
 */
describe('RPC server stop', () => {
  let client: ClientRMQ;
  const replicas: INestMicroservice[] = [];

  beforeAll(async () => {
    replicas.push(await replica(), await replica());
    client = clientOf(QUEUE);
    await client.connect();
  });

  afterAll(async () => {
    await client.close();
    for (const app of replicas) await app.close();
  });

  it('answers every request in flight when a replica closes mid-load', async () => {
    const requests = Array.from({ length: 60 }, (_, n) =>
      firstValueFrom(client.send<{ n: number }>('slow.echo', { n }).pipe(timeout(4000))).then(
        (reply) => reply.n,
        (error: unknown) => `request ${n}: ${String(error)}`,
      ),
    );
    const [stopping, other] = replicas.map(counts);
    // Both replicas are working on requests; the first one stops with its share unanswered.
    await until(() => stopping.taken > 0 && other.taken > 0, () => `both replicas at work: ${stopping.taken}, ${other.taken} taken`);
    expect(stopping.answered).toBe(0);
    await replicas.shift()!.close();
    // It answered every request it had taken before it went.
    expect(stopping.answered).toBe(stopping.taken);
    const answers = await Promise.all(requests);
    expect(answers).toEqual(Array.from({ length: 60 }, (_, n) => n));
    expect(stopping.taken + other.taken).toBe(60);
  }, 20_000);

  it('gives the requests a crashed replica held to another one, for read-only services', async () => {
    const queue = `rpc-crash.${randomUUID()}`;
    const survivor = await replica(queue, true);
    const victim = await replica(queue, true);
    const caller = clientOf(queue);
    await caller.connect();
    try {
      const requests = Array.from({ length: 30 }, (_, n) =>
        firstValueFrom(caller.send<{ n: number }>('slow.echo', { n }).pipe(timeout(4000))).then(
          (reply) => reply.n,
          (error: unknown) => `request ${n}: ${String(error)}`,
        ),
      );
      // The victim holds requests it has not answered when its connection drops.
      await until(() => counts(victim).taken > 0, () => 'the victim to take requests');
      expect(counts(victim).answered).toBe(0);
      await crash(victim);
      expect(await Promise.all(requests)).toEqual(Array.from({ length: 30 }, (_, n) => n));
    } finally {
      await caller.close();
      await survivor.close();
      await victim.close().catch(() => undefined);
    }
  }, 20_000);
});

describe('RPC server: payload depth', () => {
  it('answers a request nested 5,000 deep with the 400 reply of a service, and keeps answering', async () => {
    const queue = `rpc-deep.${randomUUID()}`;
    const server = await replica(queue);
    const connection = await amqp.connect(process.env.RABBITMQ_URL!);
    const channel = await connection.createChannel();
    try {
      const { queue: replyTo } = await channel.assertQueue('', { exclusive: true });
      const replies = new Map<string, (packet: unknown) => void>();
      await channel.consume(replyTo, (message) => message && replies.get(message.properties.correlationId)?.(JSON.parse(message.content.toString())), { noAck: true });
      // Written as text: a serializer that recurses (JSON.stringify among them) cannot even produce it.
      const call = (data: string) =>
        new Promise<unknown>((resolve) => {
          const id = randomUUID();
          replies.set(id, resolve);
          channel.sendToQueue(queue, Buffer.from(`{"pattern":"slow.echo","data":${data},"id":"${id}"}`), { replyTo, correlationId: id });
        });
      const nested = (depth: number) => `{"n":1,"deep":${'['.repeat(depth)}${']'.repeat(depth)}}`;
      const refused = (await call(nested(5_000))) as { response: unknown };
      expect(refused.response).toEqual({
        ok: false,
        status: 400,
        body: {
          error: 'Validation Error',
          message: 'The request nests objects and arrays more than 32 levels deep',
          details: { body: ['The request nests objects and arrays more than 32 levels deep'] },
        },
      });
      // 32 levels in the payload are a request like any other.
      expect(((await call(nested(31))) as { response: unknown }).response).toEqual({ n: 1 });
    } finally {
      await channel.close();
      await connection.close();
      await server.close();
    }
  }, 20_000);
});
