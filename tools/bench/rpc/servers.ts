import 'reflect-metadata';
import { Controller, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { MessagePattern, MicroserviceOptions, Payload } from '@nestjs/microservices';
import { RPC_QUEUE_ARGUMENTS, rpcOk } from '@cars/contracts';
import { rpcServerOptions } from '@cars/messaging';
import { connect } from 'amqplib';
import { BenchRequest, ECHO_PATTERN, OURS_QUEUE, RAW_QUEUE, recordNoDelay, replyText } from './shared';
import { runBenchChild } from '../common/child';

/**
 * The two servers of the RPC benchmark, in one process of their own (main.ts starts it; the
 * bench alternates between them, so one idles while the other is measured):
 *
 *   RABBITMQ_URL=… node dist/tools/bench/rpc/servers.js
 *
 * - ours: a Nest microservice on DrainingRmqServer (rpcServerOptions, as the read-only query
 *   service runs it: acknowledged once the reply is out) whose handler echoes the payload, or
 *   answers a `reply` request with JSON text (sent as the text's bytes, as a query page is);
 * - raw: amqplib, the same queue arguments, replying to `replyTo` with the request's bytes, or
 *   with the JSON text's bytes to a `reply` request (which it parses to know).
 *
 * Prints `ready <noDelay sockets>/<sockets>` when both consume.
 */

@Controller()
class EchoHandler {
  @MessagePattern(ECHO_PATTERN)
  echo(@Payload() payload: BenchRequest) {
    return rpcOk(payload.reply === undefined ? payload : replyText(payload.reply));
  }
}

@Module({ controllers: [EchoHandler] })
class EchoModule {}

async function main(): Promise<{ close(): Promise<void> }> {
  const sockets = recordNoDelay();
  const url = process.env.RABBITMQ_URL ?? 'amqp://guest:guest@127.0.0.1:5672';
  const prefetch = Number(process.env.PREFETCH ?? 32);
  const replyMode = process.env.REPLY_MODE === '1';

  const ours = await NestFactory.createMicroservice<MicroserviceOptions>(EchoModule, {
    ...rpcServerOptions(url, OURS_QUEUE, { redeliverOnCrash: true, prefetchCount: prefetch }),
    logger: ['error', 'warn'],
  });
  await ours.listen();

  const connection = await connect(url, { noDelay: true });
  const channel = await connection.createChannel();
  await channel.assertQueue(RAW_QUEUE, { durable: true, arguments: RPC_QUEUE_ARGUMENTS });
  await channel.prefetch(prefetch);
  await channel.consume(
    RAW_QUEUE,
    (message) => {
      if (!message) return;
      const content = replyMode ? Buffer.from(replyText((JSON.parse(message.content.toString()) as BenchRequest).reply!)) : message.content;
      channel.sendToQueue(message.properties.replyTo as string, content, { correlationId: message.properties.correlationId as string });
    },
    { noAck: true },
  );

  console.log(`ready ${sockets.filter((s) => s.noDelay).length}/${sockets.length}`);
  return {
    close: async () => {
      await ours.close();
      await connection.close();
    },
  };
}

runBenchChild(main);
