import { RmqOptions, Transport } from '@nestjs/microservices';
import { RPC_QUEUE_ARGUMENTS } from '@cars/contracts';

/**
 * amqplib leaves Nagle's algorithm on; small request/reply messages then stall ~40 ms each way.
 * Every connection of ours turns it off.
 */
export const RMQ_SOCKET_OPTIONS = {
  connectionOptions: { noDelay: true },
  heartbeatIntervalInSeconds: 5,
  reconnectTimeInSeconds: 1,
};

/** Server side of an RPC queue (a service consuming `query.rpc` and the like). */
export function rpcServerOptions(url: string, queue: string, prefetchCount = 32): RmqOptions {
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
