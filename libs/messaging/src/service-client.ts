import { Logger, OnApplicationShutdown } from '@nestjs/common';
import { RPC_QUEUE_OPTIONS, RpcPattern, RpcReply, RpcRequest, RpcResponse } from '@cars/contracts';
import { brokerUrls } from './broker-urls';
import { InProcessBus } from './in-process.transport';
import { QueueInspector } from './queue-inspector';
import { namedSocketOptions } from './rmq.options';
import { RpcAnswer, RpcClientRmq } from './rpc-client';
import { timedRpc } from './rpc.metrics';
import { utf8Text } from './utf8-text';

/** The service did not answer in time, or could not be reached at all. */
export class ServiceUnavailableError extends Error {
  constructor(
    readonly service: string,
    cause: unknown,
  ) {
    super(`The ${service} service is unavailable`, { cause });
    this.name = 'ServiceUnavailableError';
  }
}

/** Typed request/response to one service, over RabbitMQ or in-process. */
export abstract class ServiceClient {
  abstract send<P extends RpcPattern>(pattern: P, request: RpcRequest<P>): Promise<RpcReply<RpcResponse<P>>>;
  /** True when the transport is connected (readiness). */
  abstract isConnected(): boolean;
  /** How many instances of the service consume its queue now; null when it cannot be told. */
  abstract consumers(): Promise<number | null>;
}

export class RmqServiceClient extends ServiceClient implements OnApplicationShutdown {
  private readonly logger = new Logger(RmqServiceClient.name);
  private readonly client: RpcClientRmq;
  private connected = false;

  constructor(
    private readonly service: string,
    url: string,
    private readonly queue: string,
    private readonly timeoutMs: number,
    private readonly inspector?: QueueInspector,
  ) {
    super();
    this.client = new RpcClientRmq({
      urls: brokerUrls(url),
      queue,
      queueOptions: RPC_QUEUE_OPTIONS,
      // The gateway's connection to this service's queue, named for the broker's connection list.
      socketOptions: namedSocketOptions(`gateway ${queue}`),
      persistent: false,
    });
    this.client.status.subscribe((status) => {
      this.connected = status === 'connected';
    });
  }

  async connect(): Promise<void> {
    try {
      await this.client.connect();
    } catch (error) {
      // amqp-connection-manager keeps retrying; requests fail fast with 503 until it succeeds.
      this.logger.warn(`Could not connect to RabbitMQ yet for ${this.service}: ${String(error)}`);
    }
  }

  isConnected(): boolean {
    return this.connected;
  }

  consumers(): Promise<number | null> {
    return this.inspector ? this.inspector.consumers(this.queue) : Promise.resolve(null);
  }

  async send<P extends RpcPattern>(pattern: P, request: RpcRequest<P>): Promise<RpcReply<RpcResponse<P>>> {
    const answer = await this.request(pattern, request);
    // A JSON text reply is an ok reply whose value is that text (see DrainingRmqServer). Decoded
    // at once: a string costs less than the Buffer kept until the HTTP response is written
    // (measured: the retained buffers tripled the gateway's GC time; docs/performance.md), and
    // block by block (utf8Text: a page's few accented letters do not slow down all of it).
    return (answer.kind === 'json' ? { ok: true, value: utf8Text(answer.bytes) } : answer.value) as RpcReply<RpcResponse<P>>;
  }

  private async request(pattern: string, request: unknown): Promise<RpcAnswer> {
    try {
      return await timedRpc(pattern, () => this.client.request(pattern, request, this.timeoutMs));
    } catch (error) {
      throw new ServiceUnavailableError(this.service, error);
    }
  }

  async onApplicationShutdown(): Promise<void> {
    await this.client.close();
    await this.inspector?.close();
  }
}

export class InProcessServiceClient extends ServiceClient {
  constructor(
    private readonly service: string,
    private readonly bus: InProcessBus,
    private readonly timeoutMs: number,
  ) {
    super();
  }

  isConnected(): boolean {
    return true;
  }

  /** In-process services live in this very process: the one instance is this process. */
  consumers(): Promise<number | null> {
    return Promise.resolve(1);
  }

  async send<P extends RpcPattern>(pattern: P, request: RpcRequest<P>): Promise<RpcReply<RpcResponse<P>>> {
    let timer: NodeJS.Timeout | undefined;
    try {
      const expired = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`timed out after ${this.timeoutMs} ms`)), this.timeoutMs);
      });
      return (await timedRpc(pattern, () => Promise.race([this.bus.request(pattern, request), expired]))) as RpcReply<RpcResponse<P>>;
    } catch (error) {
      throw new ServiceUnavailableError(this.service, error);
    } finally {
      clearTimeout(timer);
    }
  }
}
