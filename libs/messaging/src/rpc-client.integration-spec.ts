import { randomUUID } from 'node:crypto';
import { Controller, INestMicroservice, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { MessagePattern, Payload } from '@nestjs/microservices';
import { RPC_QUEUE_OPTIONS, rpcOk } from '@cars/contracts';
import type { AmqpConnectionManager } from 'amqp-connection-manager';
import { connect } from 'amqplib';
import { RMQ_SOCKET_OPTIONS, rpcServerOptions } from './rmq.options';
import { RpcClientRmq } from './rpc-client';

const silent = { log() {}, error() {}, warn() {}, debug() {}, verbose() {} };

@Controller()
class EchoController {
  @MessagePattern('echo.n')
  echo(@Payload() data: { n: number }) {
    return rpcOk({ n: data.n });
  }

  @MessagePattern('echo.text')
  text(@Payload() data: { n: number }) {
    return rpcOk(JSON.stringify({ n: data.n, note: 'café' }));
  }
}

@Module({ controllers: [EchoController] })
class EchoModule {}

const answered = (answer: unknown) => (answer as { kind: string; value: { ok: boolean; value: { n: number } } }).value.value.n;

/**
 * The gateway's RPC client writes requests straight onto its open amqplib channel, and the read-only
 * server acknowledges a request after publishing its reply without a publisher confirm: a lost
 * connection must not leave the client writing to a dead channel, nor the server holding requests.
 */
describe('RPC client and server over RabbitMQ', () => {
  const queue = `rpc-client.${randomUUID()}`;
  let server: INestMicroservice;
  let client: RpcClientRmq;

  beforeAll(async () => {
    server = await NestFactory.createMicroservice(EchoModule, {
      ...rpcServerOptions(process.env.RABBITMQ_URL!, queue, { prefetchCount: 4, redeliverOnCrash: true }),
      logger: silent,
    });
    await server.listen();
    client = new RpcClientRmq({
      urls: [process.env.RABBITMQ_URL!],
      queue,
      queueOptions: RPC_QUEUE_OPTIONS,
      socketOptions: RMQ_SOCKET_OPTIONS,
      persistent: false,
    });
  });

  afterAll(async () => {
    await client.close();
    await server.close();
  });

  it('answers many more requests than the prefetch window: every one is acknowledged', async () => {
    const answers = await Promise.all(Array.from({ length: 200 }, (_, n) => client.request('echo.n', { n }, 4000)));
    expect(answers.map(answered)).toEqual(Array.from({ length: 200 }, (_, n) => n));
    // Nothing left on the queue or unacknowledged by the server.
    const connection = await connect(process.env.RABBITMQ_URL!);
    try {
      const channel = await connection.createChannel();
      expect((await channel.checkQueue(queue)).messageCount).toBe(0);
    } finally {
      await connection.close();
    }
  });

  it('hands a JSON text answer over as its bytes', async () => {
    const answer = await client.request('echo.text', { n: 7 }, 4000);
    expect(answer.kind).toBe('json');
    expect(JSON.parse((answer as { bytes: Buffer }).bytes.toString())).toEqual({ n: 7, note: 'café' });
  });

  it('fails fast while its broker connection is down, and answers on the new channel once it is back', async () => {
    expect(answered(await client.request('echo.n', { n: 1 }, 4000))).toBe(1);
    const manager = (client as unknown as { client: AmqpConnectionManager }).client;
    const lost = new Promise((resolve) => manager.once('disconnect', resolve));
    // The socket fails, as when the broker goes away.
    (manager.connection as unknown as { connection: { stream: { destroy(error: Error): void } } }).connection.stream.destroy(new Error('connection reset'));
    await lost;
    // Down: a request is refused at once (the gateway answers 503), not left to its timeout. The
    // refusal is @nestjs/microservices' ClientRMQ's, a string rather than an Error.
    const started = Date.now();
    await expect(client.request('echo.n', { n: 2 }, 4000)).rejects.toBe('Error: Connection lost. Trying to reconnect...');
    expect(Date.now() - started).toBeLessThan(1000);
    // Back (reconnectTimeInSeconds: 1): requests go out on the new channel.
    let back = false;
    for (let i = 0; i < 100 && !back; i += 1) {
      back = await client.request('echo.n', { n: 3 }, 1000).then(
        () => true,
        () => new Promise<boolean>((resolve) => setTimeout(() => resolve(false), 100)),
      );
    }
    expect(back).toBe(true);
    const answers = await Promise.all(Array.from({ length: 20 }, (_, n) => client.request('echo.n', { n }, 4000)));
    expect(answers.map(answered)).toEqual(Array.from({ length: 20 }, (_, n) => n));
  }, 20_000);

  /** The answer to `n` once the client answers again (retried for up to 10 s), or null. */
  async function answeredAgain(n: number): Promise<number | null> {
    const deadline = Date.now() + 10_000;
    for (;;) {
      const answer = await client.request('echo.n', { n }, 1000).then(answered, () => null);
      if (answer !== null || Date.now() > deadline) return answer;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  it('survives the broker closing its channel (a channel error) and answers again on a new one', async () => {
    expect(answered(await client.request('echo.n', { n: 1 }, 4000))).toBe(1);
    const open = (client as unknown as { open?: { checkQueue(name: string): Promise<unknown> } }).open;
    expect(open).toBeDefined();
    // A declaration check of a queue that does not exist: the broker answers 404 by closing the channel.
    await expect(open!.checkQueue(`missing.${randomUUID()}`)).rejects.toThrow(/NOT_FOUND/);
    expect(await answeredAgain(5)).toBe(5);
  }, 20_000);

  it('takes a failed channel setup reported by the connection manager in its stride', async () => {
    expect(answered(await client.request('echo.n', { n: 1 }, 4000))).toBe(1);
    const wrapper = (client as unknown as { channel: { emit(event: string, error: Error): boolean } }).channel;
    // What amqp-connection-manager emits when the reply consumer cannot be set up again: unheard, it would throw.
    expect(() => wrapper.emit('error', new Error('Channel ended, no reply will be forthcoming'))).not.toThrow();
    expect(await answeredAgain(6)).toBe(6);
  }, 20_000);
});
