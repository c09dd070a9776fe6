import { EventBatchItem, EventHeaders, eventsOfMessage } from '@cars/contracts';
import type { OutboxEvent } from './event-publisher';
import { EventPacking, packEvents } from './event-messages';

let seq = 0;
function event(type: string, routing: Partial<OutboxEvent['routing']> = {}, bodyBytes = 0): OutboxEvent {
  seq += 1;
  const id = `evt_${seq}`;
  return {
    seq: String(seq),
    id,
    type,
    createdAt: new Date(Date.UTC(2026, 10, 21, 12, 0, seq)),
    // As the outbox stores it: the envelope's JSON text, spacing and all.
    body: `{"id": "${id}", "type": "${type}", "pad": "${'x'.repeat(bodyBytes)}"}`,
    routing: { make: 'Porsche', source: 'bringatrailer', auction_id: '7', ...routing },
  };
}

const packing = (overrides: Partial<EventPacking> = {}): EventPacking => ({ maxEvents: 250, maxBytes: 1024 * 1024, ...overrides });
const decoded = (message: ReturnType<typeof packEvents>[number]) => eventsOfMessage(message.body, message.headers);

describe('packEvents', () => {
  it('packs consecutive events of one type in one message each, in seq order, the type as routing key', () => {
    const events = [event('auction.created'), event('bid.created'), event('bid.created'), event('auction.updated'), event('bid.created')];
    const messages = packEvents(events, packing());
    expect(messages.map((m) => [m.type, m.count])).toEqual([
      ['auction.created', 1],
      ['bid.created', 2],
      ['auction.updated', 1],
      ['bid.created', 1],
    ]);
    expect(messages.flatMap((m) => decoded(m).map((item) => item.seq))).toEqual(events.map((e) => e.seq));
    expect(messages[1].headers).toEqual({ [EventHeaders.Count]: 2, [EventHeaders.Seq]: events[1].seq });
    expect(messages[1].messageId).toBeUndefined();
    expect(messages[1].timestamp).toBe(Math.floor(events[1].createdAt.getTime() / 1000));
  });

  it('carries each envelope exactly as written, with its seq and routing context beside it', () => {
    const events = [event('bid.created', { make: null }), event('bid.created', { auction_id: '8' })];
    const [message] = packEvents(events, packing());
    const items: EventBatchItem[] = decoded(message);
    expect(items).toEqual(events.map((e) => ({ seq: e.seq, routing: e.routing, event: JSON.parse(e.body) })));
    expect(message.body.toString()).toContain(events[0].body);
  });

  it('closes a message at maxEvents, and before its body passes maxBytes (a larger event alone)', () => {
    const counted = packEvents(Array.from({ length: 5 }, () => event('auction.created')), packing({ maxEvents: 2 }));
    expect(counted.map((m) => m.count)).toEqual([2, 2, 1]);
    const sized = [event('bid.created', {}, 300), event('bid.created', {}, 300), event('bid.created', {}, 3000), event('bid.created', {}, 10)];
    const messages = packEvents(sized, packing({ maxBytes: 1000 }));
    expect(messages.map((m) => m.count)).toEqual([2, 1, 1]);
    for (const m of messages) if (m.count > 1) expect(m.body.length).toBeLessThanOrEqual(1000);
  });

  it('with maxEvents 1, publishes one message per event: body = envelope, messageId = its id, routing context in headers', () => {
    const events = [event('auction.created', { make: null }), event('bid.created')];
    const messages = packEvents(events, packing({ maxEvents: 1 }));
    expect(messages).toEqual(
      events.map((e) => ({
        type: e.type,
        body: Buffer.from(e.body),
        messageId: e.id,
        timestamp: Math.floor(e.createdAt.getTime() / 1000),
        headers: {
          ...(e.routing.make === null ? {} : { [EventHeaders.Make]: e.routing.make }),
          [EventHeaders.Source]: 'bringatrailer',
          [EventHeaders.AuctionId]: '7',
          [EventHeaders.Seq]: e.seq,
        },
        count: 1,
      })),
    );
    expect(messages.flatMap(decoded)).toEqual(events.map((e) => ({ seq: e.seq, routing: e.routing, event: JSON.parse(e.body) })));
  });

  it('packs nothing out of nothing', () => {
    expect(packEvents([], packing())).toEqual([]);
  });
});
