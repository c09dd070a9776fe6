import { RmqContext, RpcException } from '@nestjs/microservices';
import { throwError } from 'rxjs';
import { ACCEPTS_JSON_TEXT_HEADER, DrainingRmqServer, JSON_TEXT_READER_REQUEST, JSON_TEXT_REPLY } from './rpc-server';

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

  it('sends an ok reply of JSON text as the text alone to a client that reads it, and as the packet to others', () => {
    const sent: { content: string; options: Record<string, unknown> }[] = [];
    const server = serverWith((_queue, content, options) => {
      sent.push({ content: content.toString(), options });
      return Promise.resolve(true);
    });
    const page = '{"data":[{"title":"1967 \\"Porsche\\" 911S"}],"meta":{"total":1}}';
    const reading = new RmqContext([{ properties: { type: JSON_TEXT_READER_REQUEST } }, {}, 'query.auctions']);
    const previousRelease = new RmqContext([{ properties: { headers: { [ACCEPTS_JSON_TEXT_HEADER]: true } } }, {}, 'query.auctions']);
    server.sendMessage({ id: '9', response: { ok: true, value: page }, isDisposed: true }, 'amq.rabbitmq.reply-to.z', 'corr-3', reading);
    server.sendMessage({ id: '12', response: { ok: true, value: page }, isDisposed: true }, 'amq.rabbitmq.reply-to.z', 'corr-6', previousRelease);
    server.sendMessage({ id: '10', response: { ok: true, value: page }, isDisposed: true }, 'amq.rabbitmq.reply-to.z', 'corr-4', context);
    // Errors and objects keep the packet even for a reading client.
    server.sendMessage({ id: '11', response: { ok: false, status: 400, body: {} }, isDisposed: true }, 'amq.rabbitmq.reply-to.z', 'corr-5', reading);
    expect(sent).toEqual([
      { content: page, options: { correlationId: 'corr-3', type: JSON_TEXT_REPLY } },
      { content: page, options: { correlationId: 'corr-6', type: JSON_TEXT_REPLY } },
      { content: JSON.stringify({ id: '10', response: { ok: true, value: page }, isDisposed: true }), options: { correlationId: 'corr-4' } },
      { content: JSON.stringify({ id: '11', response: { ok: false, status: 400, body: {} }, isDisposed: true }), options: { correlationId: 'corr-5' } },
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

  describe('requests', () => {
    const request = (pattern: string, data: unknown, id: string | undefined = 'r1') => ({
      content: Buffer.from(JSON.stringify(id === undefined ? { pattern, data } : { pattern, data, id })),
      properties: { replyTo: 'amq.rabbitmq.reply-to.q', correlationId: `corr-${id}`, type: JSON_TEXT_READER_REQUEST },
    });
    const setUp = () => {
      const sent: { content: string; options: Record<string, unknown> }[] = [];
      const server = serverWith((_queue, content, options) => {
        sent.push({ content: content.toString(), options });
        return Promise.resolve(true);
      });
      const acked: unknown[] = [];
      const channel = { ack: (message: unknown) => acked.push(message), nack: () => undefined };
      return { server, sent, acked, channel };
    };
    const settle = () => new Promise((resolve) => setImmediate(resolve));

    it('answers a handler’s value as one final packet, JSON text as its bytes, and counts the request in flight until then', async () => {
      const { server, sent, channel } = setUp();
      let release!: () => void;
      server.addHandler('echo', (data: { n: number }) => new Promise((resolve) => (release = () => resolve({ ok: true, value: data }))), false);
      server.addHandler('page', () => Promise.resolve({ ok: true, value: '{"data":[]}' }), false);
      const answering = server.handleMessage(request('echo', { n: 3 }), channel);
      await settle();
      expect(server.pending).toBe(1);
      expect(sent).toEqual([]);
      release();
      await answering;
      expect(server.pending).toBe(0);
      await server.handleMessage(request('page', {}, 'r2'), channel);
      await settle();
      expect(sent).toEqual([
        { content: JSON.stringify({ response: { ok: true, value: { n: 3 } }, isDisposed: true }), options: { correlationId: 'corr-r1' } },
        { content: '{"data":[]}', options: { correlationId: 'corr-r2', type: JSON_TEXT_REPLY } },
      ]);
    });

    it('answers what a handler answers with a failing observable (an exception filter) with the error packet', async () => {
      const { server, sent, channel } = setUp();
      server.addHandler('fails', () => Promise.resolve(throwError(() => new RpcException({ status: 'error', message: 'boom' }).getError())), false);
      await server.handleMessage(request('fails', {}), channel);
      await settle();
      expect(sent.map((s) => JSON.parse(s.content) as unknown)).toEqual([{ err: { status: 'error', message: 'boom' }, isDisposed: true }]);
    });

    it('answers an unknown pattern with Nest’s no-handler error', async () => {
      const { server, sent, channel } = setUp();
      await server.handleMessage(request('nobody.home', {}), channel);
      await settle();
      expect(sent.map((s) => JSON.parse(s.content) as unknown)).toEqual([
        { id: 'r1', err: 'There is no matching message handler defined in the remote service.', status: 'error' },
      ]);
    });
  });
});

