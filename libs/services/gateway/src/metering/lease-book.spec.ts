import type { LeaseGrant, LeaseSettlement } from '@cars/accounts';
import { LeaseBook, LeaseSettings, nextBlockSize, TakeResult } from './lease-book';

const SETTINGS: LeaseSettings = { maxUnits: 8, ttlMs: 30000, idleMs: 250, nearLimitIdleMs: 250, nearLimitUnits: 32, settleMs: 1000, hotMs: 1000 };
const PERIOD_END = new Date('2026-12-01T00:00:00Z');

/** A ledger of one account in memory: grants up to the room left, records every statement. */
class FakeLedger {
  used = 0;
  reserved = 0;
  grants: number[] = [];
  settlements: LeaseSettlement[] = [];
  leases = new Map<string, number>();
  pending: (() => void)[] = [];
  hold = false;
  failSettle = false;

  constructor(private readonly limit: number) {}

  async grant(request: { leaseId: string; want: number }): Promise<LeaseGrant> {
    if (this.hold) await new Promise<void>((resolve) => this.pending.push(resolve));
    const room = this.limit - this.used - this.reserved;
    if (room <= 0) return { ok: false, period: '2026-11-01', periodEnd: PERIOD_END, limit: this.limit };
    const n = Math.min(request.want, Math.max(1, Math.floor(room / 4)));
    this.reserved += n;
    this.leases.set(request.leaseId, (this.leases.get(request.leaseId) ?? 0) + n);
    this.grants.push(n);
    return { ok: true, period: '2026-11-01', periodEnd: PERIOD_END, units: n, limit: this.limit, consumed: this.used + this.reserved };
  }

  async settle(s: LeaseSettlement): Promise<boolean> {
    if (this.failSettle) throw new Error('ledger unreachable');
    const held = this.leases.get(s.leaseId);
    if (held === undefined) return false;
    this.settlements.push(s);
    const moved = s.close ? held : s.spent + s.returned;
    this.used += s.spent;
    this.reserved -= moved;
    if (s.close) this.leases.delete(s.leaseId);
    else this.leases.set(s.leaseId, held - moved);
    return true;
  }
}

function setup(limit = 1000, settings: LeaseSettings = SETTINGS) {
  const ledger = new FakeLedger(limit);
  let now = 1_000_000;
  const errors: string[] = [];
  const book = new LeaseBook(ledger, settings, () => now, (what) => errors.push(what));
  const take = () => book.take('acc', '2026-11-01', PERIOD_END, limit);
  const ok = (r: TakeResult) => {
    if (!r.ok) throw new Error('refused');
    return r.take;
  };
  /** As a request does: a unit at once if the lease has one (null otherwise), else `take`. */
  const takeNow = () => book.takeNow('acc', '2026-11-01', limit);
  return { ledger, book, take, takeNow, ok, errors, advance: (ms: number) => (now += ms) };
}

describe('LeaseBook', () => {
  it('asks for the next block once half of a busy lease is spent: requests keep finding units without waiting', async () => {
    const { ledger, book, take, takeNow, ok, advance } = setup(1_000_000);
    book.give(ok(await take()), true); // the lease's first unit: a wait for the ledger
    let waited = 0;
    for (let i = 0; i < 60; i += 1) {
      advance(10);
      const now = takeNow();
      if (now?.ok) book.give(now.take, true);
      else {
        waited += 1;
        book.give(ok(await take()), true);
      }
      await book.idle(); // the early grant lands before the next request, as it does at 10 ms apart
    }
    // Only the second request waits: the lease's first block was its one unit, spent by the first.
    expect(waited).toBe(1);
    expect(ledger.grants.slice(0, 4)).toEqual([1, 2, 4, 8]);
    expect(ledger.grants.slice(4).every((n) => n === 8)).toBe(true);
    // Held and unspent: never more than half a block plus the next block.
    expect(ledger.reserved - 61).toBeLessThanOrEqual(8 + 4);
  });

  it('spends what it holds when an early grant is refused, and refuses a request only when nothing is left', async () => {
    const { ledger, book, take, takeNow, ok } = setup(12);
    for (let i = 0; i < 3; i += 1) book.give(ok(await take()), true); // grants 1, then 2: 3 units, all spent
    await book.idle();
    let served = 3;
    for (;;) {
      const now = takeNow();
      const result = now ?? (await take());
      if (!result.ok) break;
      book.give(result.take, true);
      served += 1;
      await book.idle();
    }
    expect(served).toBe(12);
    // Every unit of the allowance was served, none twice: all 12 are reserved (spent, not yet settled).
    expect({ used: ledger.used, reserved: ledger.reserved }).toEqual({ used: 0, reserved: 12 });
  });

  it('asks for 1 unit first, then twice as many per grant while grants come within hotMs, up to maxUnits', async () => {
    const { ledger, book, take, ok } = setup();
    for (let i = 0; i < 40; i += 1) book.give(ok(await take()), true);
    expect(ledger.grants).toEqual([1, 2, 4, 8, 8, 8, 8, 8]);
    // Nothing written per request: 40 requests, 8 grants, no settlement yet (all 47 units reserved).
    expect(ledger.settlements).toEqual([]);
    expect({ used: ledger.used, reserved: ledger.reserved }).toEqual({ used: 0, reserved: 47 });
  });

  it('keeps a full block for an account whose blocks last one to two hotMs, and halves it for a slower one', async () => {
    const { ledger, book, take, ok, advance } = setup(1_000_000);
    // Ramp up within hotMs: 1, 2, 4, 8.
    for (let i = 0; i < 15; i += 1) book.give(ok(await take()), true);
    expect(ledger.grants).toEqual([1, 2, 4, 8]);
    // Steady: each block of 8 lasts 1.2 × hotMs (a request every 150 ms, well within idleMs).
    for (let i = 0; i < 24; i += 1) {
      advance(150);
      book.give(ok(await take()), true);
    }
    expect(ledger.grants).toEqual([1, 2, 4, 8, 8, 8, 8]);
    // Slower (a request every 240 ms: a block lasts 1.9 s): as large.
    ledger.grants = [];
    for (let i = 0; i < 16; i += 1) {
      advance(240);
      book.give(ok(await take()), true);
    }
    expect(ledger.grants).toEqual([8, 8]);
    // A request every 300 ms (no tick here, so the lease does not close between requests): the
    // block of 8 lasts 2.4 s, so the next is 4, which lasts 1.2 s and is kept.
    ledger.grants = [];
    for (let i = 0; i < 16; i += 1) {
      advance(300);
      book.give(ok(await take()), true);
    }
    expect(ledger.grants).toEqual([8, 4, 4]);
    expect(nextBlockSize(64, 500, SETTINGS)).toBe(8);
    expect(nextBlockSize(8, 1500, SETTINGS)).toBe(8);
    expect(nextBlockSize(8, 2500, SETTINGS)).toBe(4);
    expect(nextBlockSize(1, 5000, SETTINGS)).toBe(1);
  });

  it("starts a key's new lease at half the block of its lease closed idle within the last minute", async () => {
    const { ledger, book, take, ok, advance } = setup(1_000_000);
    for (let i = 0; i < 15; i += 1) book.give(ok(await take()), true);
    expect(ledger.grants).toEqual([1, 2, 4, 8]);
    advance(SETTINGS.idleMs);
    book.tick(); // idle: closed
    await book.idle();
    expect(book.size).toBe(0);
    advance(5000);
    book.give(ok(await take()), true);
    expect(ledger.grants).toEqual([1, 2, 4, 8, 4]);
    // After a minute without the account, from one unit again.
    advance(SETTINGS.idleMs);
    book.tick();
    await book.idle();
    advance(60_000);
    const before = ledger.grants.length;
    book.give(ok(await take()), true);
    expect(ledger.grants[before]).toBe(1);
  });

  it('grants less near the limit and refuses every waiter once no unit is left: exactly the allowance is served', async () => {
    const { ledger, take } = setup(10);
    const results = await Promise.all(Array.from({ length: 30 }, () => take()));
    expect(results.filter((r) => r.ok)).toHaveLength(10);
    expect(ledger.reserved).toBe(10);
    expect(ledger.grants.every((n) => n <= 2)).toBe(true);
  });

  it('answers takes that arrive during a grant with one grant for all of them, in arrival order', async () => {
    const { ledger, take } = setup();
    ledger.hold = true;
    const waiting = Array.from({ length: 5 }, () => take());
    ledger.hold = false;
    ledger.pending.shift()!();
    const results = await Promise.all(waiting);
    expect(results.every((r) => r.ok)).toBe(true);
    // The first take's grant (1 unit), then one for the four that arrived meanwhile; then, the
    // lease empty, the next block asked for ahead.
    expect(ledger.grants).toEqual([1, 4, 4]);
    expect(results.map((r) => r.ok && r.take.remaining)).toEqual([999, 998, 997, 996, 995]);
  });

  it('settles spent units after settleMs, and closes an idle lease giving the rest back', async () => {
    const { ledger, book, take, ok, advance } = setup();
    for (let i = 0; i < 3; i += 1) book.give(ok(await take()), i !== 1); // 1 + 2 units; the second does not count
    expect(ledger.reserved).toBe(3);
    advance(100);
    const held = ok(await take()); // from the unit given back; keeps the lease busy
    advance(SETTINGS.settleMs);
    book.tick();
    await book.idle();
    expect(ledger.settlements.map((s) => [s.spent, s.close])).toEqual([[2, false]]);
    book.give(held, false);
    advance(SETTINGS.idleMs);
    book.tick();
    await book.idle();
    expect(ledger.settlements.map((s) => [s.spent, s.close])).toEqual([
      [2, false],
      [0, true],
    ]);
    expect({ used: ledger.used, reserved: ledger.reserved, leases: ledger.leases.size, book: book.size }).toEqual({
      used: 2,
      reserved: 0,
      leases: 0,
      book: 0,
    });
  });

  it('stops spending a lease it could not renew for ¾ of its TTL, and takes a new one', async () => {
    const { ledger, book, take, ok, advance, errors } = setup();
    book.give(ok(await take()), true);
    const inFlight = ok(await take()); // a second block of 2, one unit left; this request keeps the lease busy
    ledger.failSettle = true;
    advance(SETTINGS.ttlMs / 3);
    book.tick();
    await book.idle();
    expect(errors).toEqual(['settle']);
    advance(SETTINGS.ttlMs / 2);
    const next = ok(await take());
    expect(ledger.leases.size).toBe(2);
    // The new lease's first unit, and its next block asked for ahead.
    expect(ledger.grants).toEqual([1, 2, 1, 2]);
    book.give(next, true);
    book.give(inFlight, true);
  });

  it('writes nothing more for a lease the ledger swept (expired): its units are back there', async () => {
    const { ledger, book, take, ok, advance } = setup();
    const t = ok(await take());
    await book.idle(); // the next block, asked for ahead, is granted too
    ledger.leases.clear(); // another gateway's sweep
    ledger.reserved = 0;
    book.give(t, true);
    advance(SETTINGS.settleMs);
    book.tick();
    await book.idle();
    expect(ledger.settlements).toEqual([]);
    expect(book.size).toBe(0);
    expect(ledger.used).toBe(0);
  });

  it('closeAll settles and gives back every lease (shutdown)', async () => {
    const { ledger, book, take, ok } = setup();
    for (let i = 0; i < 4; i += 1) book.give(ok(await take()), true);
    await book.closeAll();
    expect({ used: ledger.used, reserved: ledger.reserved, leases: ledger.leases.size }).toEqual({ used: 4, reserved: 0, leases: 0 });
  });

  it('keeps a slow account\'s lease between requests and never makes it wait again; near the limit an unused lease closes after nearLimitIdleMs', async () => {
    const settings = { ...SETTINGS, idleMs: 10_000, nearLimitIdleMs: 250 };
    const slow = setup(1_000_000, settings);
    slow.book.give(slow.ok(await slow.take()), true);
    let waited = 0;
    for (let i = 0; i < 20; i += 1) {
      slow.advance(2_000); // one request every 2 s
      slow.book.tick();
      await slow.book.idle();
      const now = slow.takeNow();
      if (now?.ok) slow.book.give(now.take, true);
      else {
        waited += 1;
        slow.book.give(slow.ok(await slow.take()), true);
      }
      await slow.book.idle();
    }
    expect(waited).toBe(0);
    expect(slow.ledger.settlements.filter((s) => s.close)).toEqual([]);
    expect(slow.ledger.used).toBe(21 - 1); // settled every settleMs, the last request's unit not yet
    // Unused for idleMs: closed, every unit settled or given back.
    slow.advance(settings.idleMs);
    slow.book.tick();
    await slow.book.idle();
    expect({ used: slow.ledger.used, reserved: slow.ledger.reserved, book: slow.book.size }).toEqual({ used: 21, reserved: 0, book: 0 });

    // 34 units in all: after its second grant fewer than nearLimitUnits (32) are left unreserved, so the lease is near the limit.
    const near = setup(34, settings);
    near.book.give(near.ok(await near.take()), true);
    await near.book.idle();
    near.advance(settings.nearLimitIdleMs);
    near.book.tick();
    await near.book.idle();
    expect({ used: near.ledger.used, reserved: near.ledger.reserved, book: near.book.size }).toEqual({ used: 1, reserved: 0, book: 0 });
  });

  it('hurries the ledger when a request waits for a block that was asked for ahead', async () => {
    const ledger = new FakeLedger(1_000_000);
    const ahead: boolean[] = [];
    let hurried = 0;
    let now = 1_000_000;
    const book = new LeaseBook(
      {
        grant: (request, early) => {
          ahead.push(early);
          return ledger.grant(request);
        },
        settle: (s) => ledger.settle(s),
        hurry: () => (hurried += 1),
      },
      SETTINGS,
      () => now,
      () => undefined,
    );
    const take = () => book.take('acc', '2026-11-01', PERIOD_END, 1_000_000);
    const first = await take(); // waits; the next block is asked for ahead
    expect(ahead).toEqual([false, true]);
    ledger.hold = true;
    now += 10;
    if (first.ok) book.give(first.take, true);
    await book.idle();
    // Both units of the second block taken, the third block asked for ahead and held up in the ledger.
    const units = [book.takeNow('acc', '2026-11-01', 1_000_000), book.takeNow('acc', '2026-11-01', 1_000_000)];
    expect(units.every((u) => u?.ok)).toBe(true);
    expect(ahead).toEqual([false, true, true]);
    expect(hurried).toBe(0);
    const waiting = take();
    expect(hurried).toBe(1);
    ledger.hold = false;
    ledger.pending.shift()!();
    expect((await waiting).ok).toBe(true);
  });
});
