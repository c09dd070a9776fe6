import { randomUUID } from 'node:crypto';
import { Controller, INestMicroservice, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { MessagePattern, Payload } from '@nestjs/microservices';
import { RpcPattern, rpcOk } from '@cars/contracts';
import { rpcServerOptions } from './rmq.options';
import { RmqServiceClient } from './service-client';

const silent = { log() {}, error() {}, warn() {}, debug() {}, verbose() {} };

/** Pages of JSON text as the query service sends them: ASCII, and with other characters here and there. */
const PAGES = [
  JSON.stringify({ data: Array.from({ length: 50 }, (_, i) => ({ id: i, description: 'x'.repeat(2000) })), meta: { total: 50 } }),
  JSON.stringify({
    data: Array.from({ length: 60 }, (_, i) => ({
      id: i,
      title: i % 7 === 0 ? `Citroën DS ${i} — “Déesse” 🚗` : `Plain ${i}`,
      description: `${'Zeile\n\t"quoted" \\ '.repeat(150)}${i % 11 === 0 ? 'Škoda Ærø 日本語 👨‍👩‍👧' : ''}`,
    })),
    meta: { total: 60 },
  }),
  `{"data":[{"note":"${'a'.repeat(4094)}é€🚗${'b'.repeat(4093)}日"}],"meta":{"total":1}}`,
];

@Controller()
class PageController {
  @MessagePattern('page.n')
  page(@Payload() data: { n: number }) {
    return rpcOk(PAGES[data.n]);
  }
}

@Module({ controllers: [PageController] })
class PageModule {}

/** The gateway's client hands a service's JSON text on as the very bytes the service sent. */
describe('RmqServiceClient: JSON text pages over RabbitMQ', () => {
  const queue = `service-client.${randomUUID()}`;
  let server: INestMicroservice;
  let client: RmqServiceClient;

  beforeAll(async () => {
    server = await NestFactory.createMicroservice(PageModule, { ...rpcServerOptions(process.env.RABBITMQ_URL!, queue), logger: silent });
    await server.listen();
    client = new RmqServiceClient('query', process.env.RABBITMQ_URL!, queue, 4000);
    await client.connect();
  });

  afterAll(async () => {
    await client.onApplicationShutdown();
    await server.close();
  });

  it.each(PAGES.map((page, n) => [n, Buffer.byteLength(page)]))('page %i (%i bytes): the same bytes as sent', async (n) => {
    const reply = await client.send('page.n' as RpcPattern, { n } as never);
    expect(reply.ok).toBe(true);
    expect(Buffer.from((reply as { value: string }).value).equals(Buffer.from(PAGES[n as number]))).toBe(true);
  });
});
