import { CustomStrategy, RmqOptions, Transport } from '@nestjs/microservices';
import { RPC_QUEUE_ARGUMENTS } from '@cars/contracts';
import { drainingRpcServer } from './rpc-server';

/**
 * amqplib leaves Nagle's algorithm on; small request/reply messages then stall ~40 ms each way.
 * Every connection of ours turns it off.
 */
export const RMQ_SOCKET_OPTIONS = {
  connectionOptions: { noDelay: true },
  heartbeatIntervalInSeconds: 5,
  reconnectTimeInSeconds: 1,
};

/**
 * Server side of an RPC queue (a service consuming `query.rpc` and the like): a draining RabbitMQ
 * server (see DrainingRmqServer) with these settings.
 */
export function rpcServerOptions(url: string, queue: string, prefetchCount = 32): CustomStrategy {
  return drainingRpcServer(rmqServerSettings(url, queue, prefetchCount));
}

function rmqServerSettings(url: string, queue: string, prefetchCount: number): RmqOptions {
  return {
    transport: Transport.RMQ,
    options: {
      urls: [url],
      queue,
      queueOptions: { durable: true, arguments: RPC_QUEUE_ARGUMENTS },
      socketOptions: RMQ_SOCKET_OPTIONS,
      prefetchCount,
      noAck: true,
      persistent: false,
    },
  };
}
