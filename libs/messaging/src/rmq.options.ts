import { CustomStrategy, RmqOptions, Transport } from '@nestjs/microservices';
import { RPC_QUEUE_OPTIONS } from '@cars/contracts';
import { brokerUrls } from './broker-urls';
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
 * RMQ_SOCKET_OPTIONS with a name the broker shows for the connection (`connection_name` in its
 * client properties: `rabbitmqctl list_connections user_provided_name`), so an operator — or a
 * drill — can tell which process and role holds it.
 */
export function namedSocketOptions(connectionName: string): typeof RMQ_SOCKET_OPTIONS & {
  connectionOptions: { noDelay: boolean; clientProperties: { connection_name: string } };
} {
  return {
    ...RMQ_SOCKET_OPTIONS,
    connectionOptions: { ...RMQ_SOCKET_OPTIONS.connectionOptions, clientProperties: { connection_name: connectionName } },
  };
}

export interface RpcServerSettings {
  prefetchCount?: number;
  /**
   * The service's handlers only read (query, stats): a request is acknowledged once its reply is
   * published, so one held by a replica that dies goes back to the queue and another replica
   * answers it. Off for services whose handlers change things (webhooks): there a request is
   * acknowledged on delivery, and a crash loses it (its caller gets a 503) rather than running it twice.
   */
  redeliverOnCrash?: boolean;
}

/**
 * Server side of an RPC queue (a service consuming `query.rpc` and the like): a draining RabbitMQ
 * server (see DrainingRmqServer) with these settings.
 */
export function rpcServerOptions(url: string, queue: string, settings: RpcServerSettings = {}): CustomStrategy {
  return drainingRpcServer(rmqServerSettings(url, queue, settings.prefetchCount ?? 32, settings.redeliverOnCrash ?? false));
}

function rmqServerSettings(url: string, queue: string, prefetchCount: number, redeliverOnCrash: boolean): RmqOptions {
  return {
    transport: Transport.RMQ,
    options: {
      urls: brokerUrls(url),
      queue,
      queueOptions: RPC_QUEUE_OPTIONS,
      socketOptions: namedSocketOptions(`rpc-server ${queue}`),
      prefetchCount,
      noAck: !redeliverOnCrash,
      persistent: false,
    },
  };
}
