/** What a tracker hands back when a prefix of its deliveries is settled. */
export interface AckWatermark<T> {
  /** The item whose delivery tag one `ack(item, true)` must name: the highest tag now acknowledgeable. */
  item: T;
  /** How many deliveries that one multiple ack acknowledges (nacked ones excluded). */
  count: number;
}

const PENDING = 0;
const READY = 1;

interface Entry<T> {
  item: T;
  state: typeof PENDING | typeof READY;
}

/**
 * The outstanding deliveries of ONE channel, for acknowledging with `multiple = true`.
 *
 * A multiple ack of tag T acknowledges every unacknowledged delivery of the channel up to T, so
 * it may only be sent once every delivery with a lower tag is settled: acknowledged-to-be (ready)
 * or already nacked. Deliveries are registered in delivery order (the broker numbers them
 * 1, 2, 3… per channel), settled in any order, and `flush()` returns the highest ready tag below
 * the first one still pending, which covers every ready delivery before it. A nacked tag is
 * forgotten as soon as the nack is sent (the broker no longer holds it), so it never blocks
 * later acks, but until the nack is sent it is pending and blocks them: nack first, then flush.
 * The returned tag is always a ready one that no earlier ack covered, so the broker never sees an
 * unknown delivery tag.
 */
export class ChannelAckTracker<T> {
  /** Unsettled-or-unflushed deliveries by tag; Map iteration order is insertion (= tag) order. */
  private readonly entries = new Map<number, Entry<T>>();
  private lastTag = 0;

  /** Deliveries registered and not yet covered by a flushed ack or a nack. */
  get size(): number {
    return this.entries.size;
  }

  /** Registers a delivery as pending. Tags must increase (the broker's order on one channel). */
  add(tag: number, item: T): void {
    if (!(tag > this.lastTag)) throw new RangeError(`delivery tag ${tag} is not above the last one (${this.lastTag})`);
    this.lastTag = tag;
    this.entries.set(tag, { item, state: PENDING });
  }

  /** The delivery may be acknowledged (it is only sent by a later `flush()`). */
  ready(tag: number): void {
    const entry = this.entries.get(tag);
    if (!entry) throw new RangeError(`delivery tag ${tag} is not outstanding`);
    entry.state = READY;
  }

  /** The delivery was nacked (call after sending the nack): it no longer blocks acks above it. */
  nacked(tag: number): void {
    if (!this.entries.delete(tag)) throw new RangeError(`delivery tag ${tag} is not outstanding`);
  }

  /**
   * Removes the ready deliveries in front of the first pending one and returns the one whose tag
   * acknowledges them all with one `ack(item, true)`; undefined when nothing can be acknowledged yet.
   */
  flush(): AckWatermark<T> | undefined {
    let last: Entry<T> | undefined;
    let count = 0;
    for (const [tag, entry] of this.entries) {
      if (entry.state === PENDING) break;
      this.entries.delete(tag);
      last = entry;
      count += 1;
    }
    return last ? { item: last.item, count } : undefined;
  }
}

/**
 * One ChannelAckTracker per channel object: after a reconnect the new channel numbers its
 * deliveries from 1 again, and the old channel's tracker goes away with the channel.
 */
export class AckTrackers<C extends object, T> {
  private readonly trackers = new WeakMap<C, ChannelAckTracker<T>>();

  for(channel: C): ChannelAckTracker<T> {
    let tracker = this.trackers.get(channel);
    if (!tracker) {
      tracker = new ChannelAckTracker<T>();
      this.trackers.set(channel, tracker);
    }
    return tracker;
  }
}
