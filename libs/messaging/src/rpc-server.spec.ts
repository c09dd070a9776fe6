import { RmqContext } from '@nestjs/microservices';
import { DrainingRmqServer } from './rpc-server';

/** The reply path of the RPC server, against a channel that accepts or refuses the publish. */
describe('DrainingRmqServer replies', () => {
  const context = new RmqContext([{}, {}, 'query.auctions']);
  const serverWith = (sendToQueue: (queue: string, content: Buffer, options: Record<string, unknown>) => unknown) => {
    const server = new DrainingRmqServer({ urls: ['amqp://127.0.0.1:1'], queue: 'rpc-spec' });
    (server as unknown as { channel: unknown }).channel = { sendToQueue };
    return server;
  };

  it('publishes the reply to the caller’s queue with its correlation id', () => {
    const sent: { queue: string; body: unknown; options: Record<string, unknown> }[] = [];
    const server = serverWith((queue, content, options) => {
      sent.push({ queue, body: JSON.parse(content.toString()), options });
      return Promise.resolve(true);
    });
    server.sendMessage({ id: '7', response: { data: [] }, isDisposed: true }, 'amq.rabbitmq.reply-to.x', 'corr-1', context);
    expect(sent).toEqual([
      { queue: 'amq.rabbitmq.reply-to.x', body: { id: '7', response: { data: [] }, isDisposed: true }, options: { correlationId: 'corr-1' } },
    ]);
  });

  it('survives a reply the broker connection dropped: no unhandled rejection', async () => {
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    try {
      const server = serverWith(() => Promise.reject(new Error('channel closed')));
      server.sendMessage({ id: '8', response: {}, isDisposed: true }, 'amq.rabbitmq.reply-to.y', 'corr-2', context);
      await new Promise((resolve) => setImmediate(resolve));
      await new Promise((resolve) => setImmediate(resolve));
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
    expect(unhandled).toEqual([]);
  });
});
