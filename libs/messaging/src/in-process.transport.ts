import { CustomTransportStrategy, MessageHandler, Server } from '@nestjs/microservices';
import { lastValueFrom, isObservable } from 'rxjs';

/**
 * The in-process stand-in for the broker used by the quick start: it carries the same message
 * patterns as the RabbitMQ transport, between modules of one process.
 */
export class InProcessBus {
  private readonly handlers = new Map<string, MessageHandler>();

  register(pattern: string, handler: MessageHandler): void {
    if (this.handlers.has(pattern)) throw new Error(`In-process bus: pattern "${pattern}" registered twice`);
    this.handlers.set(pattern, handler);
  }

  has(pattern: string): boolean {
    return this.handlers.has(pattern);
  }

  async request(pattern: string, data: unknown): Promise<unknown> {
    const handler = this.handlers.get(pattern);
    if (!handler) throw new Error(`No in-process handler for pattern "${pattern}"`);
    // Copy the payload like a broker would, so no caller shares objects with a handler.
    const result: unknown = await handler(structuredClone(data));
    const value: unknown = isObservable(result) ? await lastValueFrom(result) : result;
    return structuredClone(value);
  }
}

/** Nest microservice strategy that registers a module's @MessagePattern handlers on the bus. */
export class InProcessServer extends Server implements CustomTransportStrategy {
  constructor(private readonly bus: InProcessBus) {
    super();
  }

  listen(callback: () => void): void {
    for (const [pattern, handler] of this.messageHandlers) {
      if (!handler.isEventHandler) this.bus.register(pattern, handler);
    }
    callback();
  }

  close(): void {
    // Nothing to release: the bus lives as long as the process.
  }

  on(): void {
    throw new Error('The in-process transport has no events to subscribe to.');
  }

  unwrap<T>(): T {
    return this.bus as T;
  }
}
