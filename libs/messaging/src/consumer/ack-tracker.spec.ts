import { AckTrackers, ChannelAckTracker } from './ack-tracker';

function tracker(...tags: number[]): ChannelAckTracker<string> {
  const t = new ChannelAckTracker<string>();
  for (const tag of tags) t.add(tag, `m${tag}`);
  return t;
}

describe('ChannelAckTracker', () => {
  it('acknowledges a settled batch with one ack of its highest tag', () => {
    const t = tracker(1, 2, 3, 4);
    for (const tag of [3, 1, 4, 2]) t.ready(tag);
    expect(t.flush()).toEqual({ item: 'm4', count: 4 });
    expect(t.size).toBe(0);
    expect(t.flush()).toBeUndefined();
  });

  it('holds back a batch that finished before an earlier one, then covers both', () => {
    const t = tracker(1, 2, 3, 4, 5, 6);
    // batch B (4..6) settles first: batch A (1..3) is still in flight
    for (const tag of [4, 5, 6]) t.ready(tag);
    expect(t.flush()).toBeUndefined();
    for (const tag of [1, 2, 3]) t.ready(tag);
    expect(t.flush()).toEqual({ item: 'm6', count: 6 });
  });

  it('acknowledges only up to the first pending delivery', () => {
    const t = tracker(1, 2, 3, 4, 5);
    t.ready(1);
    t.ready(2);
    t.ready(4);
    expect(t.flush()).toEqual({ item: 'm2', count: 2 });
    expect(t.flush()).toBeUndefined();
    t.ready(3);
    expect(t.flush()).toEqual({ item: 'm4', count: 2 });
    expect(t.size).toBe(1);
  });

  it('lets a delivery awaiting its nack block the acks above it until the nack is sent', () => {
    const t = tracker(1, 2, 3);
    t.ready(1);
    t.ready(3);
    expect(t.flush()).toEqual({ item: 'm1', count: 1 });
    t.nacked(2);
    expect(t.flush()).toEqual({ item: 'm3', count: 1 });
  });

  it('never names a nacked tag: the ack stops at the highest ready tag', () => {
    const t = tracker(1, 2, 3, 4);
    t.ready(1);
    t.ready(2);
    t.nacked(3);
    expect(t.flush()).toEqual({ item: 'm2', count: 2 });
    t.nacked(4);
    expect(t.flush()).toBeUndefined();
    expect(t.size).toBe(0);
  });

  it('returns nothing when everything settled was nacked', () => {
    const t = tracker(1, 2);
    t.nacked(1);
    t.nacked(2);
    expect(t.flush()).toBeUndefined();
  });

  it('never covers a tag twice', () => {
    const t = tracker(1, 2);
    t.ready(1);
    expect(t.flush()).toEqual({ item: 'm1', count: 1 });
    t.add(3, 'm3');
    t.ready(3);
    t.ready(2);
    expect(t.flush()).toEqual({ item: 'm3', count: 2 });
  });

  it('refuses tags out of delivery order and settling unknown or covered tags', () => {
    const t = tracker(5);
    expect(() => t.add(5, 'again')).toThrow(RangeError);
    expect(() => t.add(4, 'older')).toThrow(RangeError);
    expect(() => t.ready(6)).toThrow(RangeError);
    t.ready(5);
    t.flush();
    expect(() => t.ready(5)).toThrow(RangeError);
    expect(() => t.nacked(5)).toThrow(RangeError);
  });

  it('matches a model of the broker under random out-of-order settlement', () => {
    let seed = 42;
    const random = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed % n;
    };
    for (let round = 0; round < 50; round += 1) {
      const t = new ChannelAckTracker<number>();
      const unacked = new Set<number>(); // the broker's view
      const settled = new Set<number>(); // ours: safe to acknowledge
      const open: number[] = [];
      let next = 1;
      for (let step = 0; step < 200; step += 1) {
        if (open.length === 0 || random(3) === 0) {
          t.add(next, next);
          unacked.add(next);
          open.push(next);
          next += 1;
          continue;
        }
        const [tag] = open.splice(random(open.length), 1);
        if (random(4) === 0) {
          unacked.delete(tag); // nack(requeue) sent
          t.nacked(tag);
        } else {
          settled.add(tag);
          t.ready(tag);
        }
        const watermark = t.flush();
        if (watermark) {
          const covered = [...unacked].filter((u) => u <= watermark.item);
          expect(unacked.has(watermark.item)).toBe(true); // never an unknown tag
          expect(covered.every((u) => settled.has(u))).toBe(true); // never an unsettled one
          expect(covered).toHaveLength(watermark.count);
          for (const u of covered) unacked.delete(u);
        }
      }
      // everything settled and below the first open delivery has been acknowledged
      const firstOpen = Math.min(...open, next);
      expect([...unacked].filter((u) => u < firstOpen)).toEqual([]);
    }
  });
});

describe('AckTrackers', () => {
  it('keeps one tracker per channel object', () => {
    const trackers = new AckTrackers<object, string>();
    const before = {};
    const after = {};
    trackers.for(before).add(1, 'old');
    trackers.for(after).add(1, 'new');
    trackers.for(after).ready(1);
    expect(trackers.for(after).flush()).toEqual({ item: 'new', count: 1 });
    expect(trackers.for(before).size).toBe(1);
  });
});
