import { randomUUID } from 'node:crypto';
import { Controller, INestMicroservice, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { MessagePattern, Transport } from '@nestjs/microservices';
import { PAGE_ROWS_READER_REQUEST, PAGE_ROWS_REPLY, pageRows, RPC_QUEUE_ARGUMENTS, RpcPattern, rpcOk } from '@cars/contracts';
import { connect } from 'amqplib';
import { rpcServerOptions } from './rmq.options';
import { JSON_TEXT_READER_REQUEST, JSON_TEXT_REPLY } from './rpc-server';
import { RmqServiceClient } from './service-client';

const silent = { log() {}, error() {}, warn() {}, debug() {}, verbose() {} };

/** A page larger than an AMQP frame (128 KiB), with what JSON escapes and text beyond the BMP. */
const ITEMS = Array.from({ length: 60 }, (_, i) => ({
  id: i,
  title: `Wagen ${i}: "Käfer" \\ 🚗 日本`,
  description: `${'Zeile\n\t"~": '.repeat(200)}${i}`,
  price: i % 3 === 0 ? null : i * 1000,
}));
const META = { total: 60, page: 1, limit: 60, total_pages: 1, has_more: false, next_cursor: null };
const JSON_PAGE = `{"data":[${ITEMS.map((item) => JSON.stringify(item)).join(',')}],"meta":${JSON.stringify(META)}}`;
const ROWS_PAGE = pageRows(
  'id,title,description,price',
  ITEMS.map((item) => `{${Object.values(item).map((value) => `"~":${JSON.stringify(value)}`).join(',')}}`),
  META,
);

/** A query service of this release: its handler answers a page as PageRows (the server sends each client its form). */
@Controller()
class CurrentController {
  @MessagePattern('page')
  page() {
    return rpcOk(ROWS_PAGE);
  }
}

/** A query service of the previous release: JSON text, and a server that knows no PageRows reader. */
@Controller()
class PreviousController {
  @MessagePattern('page')
  page() {
    return rpcOk(JSON_PAGE);
  }
}

@Module({ controllers: [CurrentController] })
class CurrentModule {}

@Module({ controllers: [PreviousController] })
class PreviousModule {}

/** One request as a client of any release sends it (its AMQP `type`), straight over amqplib. */
async function rawRequest(queue: string, type: string | undefined): Promise<{ type: unknown; content: Buffer }> {
  const connection = await connect(process.env.RABBITMQ_URL!);
  try {
    const channel = await connection.createChannel();
    const reply = new Promise<{ type: unknown; content: Buffer }>((resolve) => {
      void channel.consume('amq.rabbitmq.reply-to', (message) => message && resolve({ type: message.properties.type, content: message.content }), { noAck: true });
    });
    const id = randomUUID();
    channel.sendToQueue(queue, Buffer.from(JSON.stringify({ pattern: 'page', data: {}, id })), { replyTo: 'amq.rabbitmq.reply-to', correlationId: id, type });
    return await reply;
  } finally {
    await connection.close();
  }
}

/**
 * A rolling deploy mixes gateways and query services of two releases: every pair answers the
 * gateway's clients with the same bytes; only a gateway and a query service of this release put
 * the page on the hop as PageRows.
 */
describe('pages over RabbitMQ across releases', () => {
  const current = `rpc-page-rows.current.${randomUUID()}`;
  const previous = `rpc-page-rows.previous.${randomUUID()}`;
  const servers: INestMicroservice[] = [];
  const clients: RmqServiceClient[] = [];
  const expected = Buffer.from(JSON_PAGE);

  beforeAll(async () => {
    servers.push(
      await NestFactory.createMicroservice(CurrentModule, { ...rpcServerOptions(process.env.RABBITMQ_URL!, current), logger: silent }),
      // Nest's own server answers a request it reads no `type` of with its packet, as the previous release's did.
      await NestFactory.createMicroservice(PreviousModule, {
        transport: Transport.RMQ,
        options: { urls: [process.env.RABBITMQ_URL!], queue: previous, queueOptions: { durable: true, arguments: RPC_QUEUE_ARGUMENTS } },
        logger: silent,
      }),
    );
    await Promise.all(servers.map((server) => server.listen()));
    for (const queue of [current, previous]) {
      const client = new RmqServiceClient('query', process.env.RABBITMQ_URL!, queue, 4000);
      await client.connect();
      clients.push(client);
    }
  });

  afterAll(async () => {
    await Promise.all(clients.map((client) => client.onApplicationShutdown()));
    await Promise.all(servers.map((server) => server.close()));
  });

  const send = async (client: RmqServiceClient) => {
    const reply = await client.send('page' as RpcPattern, {} as never);
    if (!reply.ok) throw new Error('not ok');
    return Buffer.from(reply.value as string);
  };

  it('this gateway, this query service: the page crosses as PageRows, in fewer bytes, and is rebuilt byte for byte', async () => {
    const hop = await rawRequest(current, PAGE_ROWS_READER_REQUEST);
    expect(hop.type).toBe(PAGE_ROWS_REPLY);
    expect(hop.content.length).toBeLessThan(expected.length);
    expect((await send(clients[0])).equals(expected)).toBe(true);
  });

  it('this gateway, a query service of the previous release: the same bytes (Nest’s packet on the hop)', async () => {
    expect((await send(clients[1])).equals(expected)).toBe(true);
  });

  it('a gateway of the previous release, this query service: JSON text on the hop, the same bytes', async () => {
    const hop = await rawRequest(current, JSON_TEXT_READER_REQUEST);
    expect(hop.type).toBe(JSON_TEXT_REPLY);
    expect(hop.content.equals(expected)).toBe(true);
  });

  it('a stock Nest client, this query service: Nest’s packet holding the JSON text', async () => {
    const hop = await rawRequest(current, undefined);
    expect(hop.type).toBeUndefined();
    const packet = JSON.parse(hop.content.toString()) as { response: { ok: boolean; value: string } };
    expect(Buffer.from(packet.response.value).equals(expected)).toBe(true);
  });
});
