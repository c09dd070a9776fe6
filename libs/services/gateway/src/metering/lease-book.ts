import { randomUUID } from 'node:crypto';
import type { LeaseGrant, LeaseRequest, LeaseSettlement } from '@cars/accounts';

/**
 * The allowance a gateway holds in leases (docs/adr/0007-metering-leases.md), one lease per
 * account, period and limit: requests take units from it in memory, and the ledger sees a grant
 * per block and a settlement per second instead of two statements per request.
 *
 *   take   — a unit of the lease, or (none left) a wait for the next grant, which serves the
 *            waiters in arrival order; a refused grant refuses every waiter (the allowance is
 *            used up: nothing in the ledger is free, and this gateway holds nothing spare).
 *   give   — the request's outcome: spent (counts) or back in the lease.
 *   tick   — settles spent units (and renews the lease) every `settleMs`, renews a lease that has
 *            nothing to settle before a third of its TTL passed, and closes a lease unused for
 *            `idleMs` — `nearLimitIdleMs` near the account's limit — (spent units settled, the
 *            rest given back).
 *
 * An account's lease lives while it is used at all, however slowly: closing it after a short
 * pause would make a slow client's every request wait for a grant, and cost a close besides.
 * Near the limit — the ledger granted less than asked, or fewer than `nearLimitUnits` units are
 * left unreserved (where the ledger's grants shrink below a full block) — the units a lease holds
 * may be the last another gateway's request needs, so an unused lease gives them back after
 * `nearLimitIdleMs`. The ledger (`LeaseLedger`) may gather the statements of many leases into
 * one (grants asked for ahead and settlements wait for its next batch; a grant a request waits
 * for goes at once, `hurry`).
 *
 * Block sizes (`nextBlockSize`): 1 unit for a lease's first grant (half the last block of the
 * key's lease if one retired within a minute); a block spent within `hotMs` is followed by one
 * twice as large (up to `maxUnits`), one spent within 2 × `hotMs` by one as large, a slower one
 * by one half as large — so a block lasts about one to two `hotMs` at the account's rate here;
 * the ledger grants less near the limit. A lease is used only while its last renewal is younger
 * than ¾ of its TTL, so a gateway that cannot reach the ledger stops spending before another can
 * sweep the lease.
 */

/** How long a retired lease's block size is remembered for the key's next lease. */
const RECENT_SIZE_MS = 60_000;
/** Keys whose recent block size is remembered, oldest forgotten first. */
const MAX_RECENT_SIZES = 50_000;

export interface LeaseLedger {
  /** `ahead`: no request waits for it yet (the lease still holds half a block). */
  grant(request: LeaseRequest, ahead: boolean): Promise<LeaseGrant>;
  settle(settlement: LeaseSettlement): Promise<boolean>;
  /** A request now waits for a grant asked for ahead: send it without waiting for company. */
  hurry?(): void;
}

export interface LeaseSettings {
  maxUnits: number;
  ttlMs: number;
  /** An unused lease closes after this long… */
  idleMs: number;
  /** …or after this long near the account's limit: fewer than `nearLimitUnits` left unreserved at its last grant. */
  nearLimitIdleMs: number;
  nearLimitUnits: number;
  settleMs: number;
  hotMs: number;
}

/** One lease's units: held in the ledger, in flight, spent and not yet settled. */
export class Lease {
  id = randomUUID();
  held = 0;
  inFlight = 0;
  spent = 0;
  /** Spent units of a settlement on its way (not yet subtracted). */
  settling = 0;
  renewedAt = 0;
  lastUseAt = 0;
  lastGrantAt = 0;
  size = 1;
  /** used + reserved the ledger reported at the last grant (this lease's whole block included). */
  consumed = 0;
  /** The last grant was less than asked for (or refused), or left fewer than `nearLimitUnits` units unreserved. */
  nearLimit = false;
  /** No longer granted to or taken from (closing, expired, or swept). */
  retired = false;
  /** Swept by another gateway (the ledger no longer knows it): nothing of it is written again. */
  gone = false;
  granting = false;
  readonly waiters: Waiter[] = [];

  constructor(
    readonly key: string,
    readonly accountId: string,
    readonly limit: number,
    readonly periodEnd: Date,
  ) {}

  get available(): number {
    return this.held - this.inFlight - this.spent - this.settling;
  }
}

export interface LeaseTake {
  lease: Lease;
  period: string;
  periodEnd: Date;
  limit: number;
  /** The allowance left after this unit, as far as this gateway knows. */
  remaining: number;
}

export type TakeResult = { ok: true; take: LeaseTake } | { ok: false; limit: number; periodEnd: Date };

interface Waiter {
  resolve: (result: TakeResult) => void;
  reject: (error: unknown) => void;
}

export class LeaseBook {
  private readonly leases = new Map<string, Lease>();
  /** Leases taken out of the map (closing, expired, swept) with units still in flight or unsettled. */
  private readonly retiring = new Set<Lease>();
  private readonly pending = new Set<Promise<unknown>>();
  /** The block size of recently retired leases, oldest first: a new lease for the key starts at half of it. */
  private readonly recentSizes = new Map<string, { size: number; at: number }>();

  constructor(
    private readonly ledger: LeaseLedger,
    private readonly settings: LeaseSettings,
    private readonly clock: () => number,
    private readonly onError: (what: string, error: unknown) => void,
  ) {}

  /** A unit of the account's allowance for one request. */
  take(accountId: string, period: string, periodEnd: Date, limit: number): Promise<TakeResult> {
    const key = `${accountId}|${period}|${limit}`;
    let lease = this.leases.get(key);
    if (lease && !this.usable(lease)) {
      this.retire(lease);
      lease = undefined;
    }
    if (!lease) {
      lease = new Lease(key, accountId, limit, periodEnd);
      lease.size = this.startingSize(key);
      this.leases.set(key, lease);
    }
    lease.lastUseAt = this.clock();
    const served = this.serve(lease, period);
    if (served) return Promise.resolve(served);
    const current = lease;
    return new Promise<TakeResult>((resolve, reject) => {
      current.waiters.push({ resolve, reject });
      if (!current.granting) this.track(this.grant(current, period));
      else if (current.waiters.length === 1) this.ledger.hurry?.();
    });
  }

  /**
   * A unit of the account's lease here, without waiting: null when none is free now (no lease,
   * its units taken, or it may no longer be spent) — then `take`, which asks the ledger.
   */
  takeNow(accountId: string, period: string, limit: number): TakeResult | null {
    const lease = this.leases.get(`${accountId}|${period}|${limit}`);
    if (!lease || lease.waiters.length > 0) return null;
    const served = this.serve(lease, period);
    if (served) {
      lease.lastUseAt = this.clock();
      this.grantAhead(lease, period);
    }
    return served;
  }

  /**
   * Asks for the next block while half of the current one is still free, so that a busy
   * account's requests keep finding units here instead of waiting for the ledger at the end of
   * every block. A refused or failed early grant changes nothing: the lease spends what it holds,
   * and the request that finds it empty asks (and waits) as before.
   */
  private grantAhead(lease: Lease, period: string): void {
    if (lease.granting || lease.lastGrantAt === 0 || lease.available * 2 > lease.size) return;
    this.track(this.grant(lease, period, true));
  }

  /** The request's unit: spent (it counts) or back in its lease for the next request. */
  give(take: LeaseTake, counted: boolean): void {
    const lease = take.lease;
    lease.inFlight -= 1;
    if (counted) lease.spent += 1;
    this.drain(lease, take.period);
    if (lease.retired && lease.inFlight === 0) this.track(this.close(lease));
  }

  /** Periodic work: settle, renew, close idle leases. */
  tick(): void {
    const now = this.clock();
    for (const lease of this.leases.values()) {
      if (lease.granting || lease.settling > 0) continue;
      const idleMs = lease.nearLimit ? this.settings.nearLimitIdleMs : this.settings.idleMs;
      const idle = lease.inFlight === 0 && lease.waiters.length === 0 && now - lease.lastUseAt >= idleMs;
      if (idle) {
        this.retire(lease);
        this.track(this.close(lease));
      } else if (lease.held > 0 && ((lease.spent > 0 && now - lease.renewedAt >= this.settings.settleMs) || now - lease.renewedAt >= this.settings.ttlMs / 3)) {
        this.track(this.settleSpent(lease));
      }
    }
    for (const lease of this.retiring) this.track(this.close(lease));
  }

  /** Closes every lease (shutdown): spent units settled, the rest given back. */
  async closeAll(): Promise<void> {
    for (const lease of [...this.leases.values()]) this.retire(lease);
    await this.idle();
    await Promise.all([...this.retiring].map((lease) => this.close(lease)));
  }

  /** Resolves once every ledger statement started so far has ended. */
  async idle(): Promise<void> {
    while (this.pending.size > 0) await Promise.all(this.pending);
  }

  /** Leases held now (for tests). */
  get size(): number {
    return this.leases.size + this.retiring.size;
  }

  /** Units the leases hold in the ledger's `reserved`, by state (the metrics). */
  holdings(): { unspent: number; inFlight: number; unsettled: number } {
    const sum = { unspent: 0, inFlight: 0, unsettled: 0 };
    for (const lease of [...this.leases.values(), ...this.retiring]) {
      if (lease.gone) continue;
      sum.unspent += Math.max(0, lease.available);
      sum.inFlight += lease.inFlight;
      sum.unsettled += lease.spent + lease.settling;
    }
    return sum;
  }

  private usable(lease: Lease): boolean {
    return !lease.retired && (lease.held === 0 || this.clock() - lease.renewedAt < (this.settings.ttlMs * 3) / 4);
  }

  private serve(lease: Lease, period: string): TakeResult | null {
    if (lease.available <= 0 || !this.usable(lease)) return null;
    lease.inFlight += 1;
    return {
      ok: true,
      take: { lease, period, periodEnd: lease.periodEnd, limit: lease.limit, remaining: Math.max(0, lease.limit - lease.consumed + lease.available) },
    };
  }

  /** Serves waiters from units given back. */
  private drain(lease: Lease, period: string): void {
    while (lease.waiters.length > 0) {
      const served = this.serve(lease, period);
      if (!served) return;
      lease.waiters.shift()!.resolve(served);
    }
  }

  /** Grants blocks while requests wait (`ahead`: at least one, waited for or not). */
  private async grant(lease: Lease, period: string, ahead = false): Promise<void> {
    lease.granting = true;
    try {
      while ((ahead || lease.waiters.length > 0) && !lease.retired) {
        const early = ahead && lease.waiters.length === 0;
        ahead = false;
        const at = this.clock();
        if (lease.lastGrantAt > 0) lease.size = nextBlockSize(lease.size, at - lease.lastGrantAt, this.settings);
        const want = Math.min(Math.max(lease.size, lease.waiters.length), this.settings.maxUnits);
        let granted: LeaseGrant;
        try {
          granted = await this.ledger.grant(
            { leaseId: lease.id, accountId: lease.accountId, period: { key: period, end: lease.periodEnd }, limit: lease.limit, want },
            early,
          );
        } catch (error) {
          if (early && lease.waiters.length === 0) this.onError('grant ahead', error);
          for (const waiter of lease.waiters.splice(0)) waiter.reject(error);
          return;
        }
        if (!granted.ok) {
          // Refused: the allowance has no room. Units still free here are served first; a
          // waiter is refused only when none is left.
          lease.nearLimit = true;
          this.drain(lease, period);
          for (const waiter of lease.waiters.splice(0)) waiter.resolve({ ok: false, limit: granted.limit, periodEnd: granted.periodEnd });
          return;
        }
        lease.renewedAt = at; // a grant renews the lease
        lease.held += granted.units;
        lease.consumed = granted.consumed;
        lease.nearLimit = granted.units < want || lease.limit - granted.consumed < this.settings.nearLimitUnits;
        lease.lastGrantAt = at;
        this.drain(lease, period);
        // Served the waiters and half a block or less is left: the next block, asked for ahead
        // (as a unit taken at once asks, `grantAhead`) — or a slow account waits at every block.
        ahead = lease.waiters.length === 0 && !early && lease.available * 2 <= lease.size;
      }
    } finally {
      lease.granting = false;
      if (lease.retired && lease.inFlight === 0) this.track(this.close(lease));
    }
  }

  /** Spent units to `used`, and the lease renewed. */
  private async settleSpent(lease: Lease): Promise<void> {
    const spent = lease.spent;
    const at = this.clock();
    lease.spent -= spent;
    lease.settling += spent;
    try {
      const known = await this.ledger.settle({ leaseId: lease.id, spent, returned: 0, kind: 'request', close: false, ttlMs: this.settings.ttlMs });
      if (known) {
        lease.held -= spent;
        lease.renewedAt = at;
      } else {
        this.forget(lease);
      }
    } catch (error) {
      lease.spent += spent; // tried again at the next tick
      this.onError('settle', error);
    } finally {
      lease.settling -= spent;
    }
  }

  /** Ends a retired lease once nothing of it is in flight: spent units settled, the rest given back. */
  private async close(lease: Lease): Promise<void> {
    if (lease.inFlight > 0 || lease.settling > 0 || lease.granting || lease.gone || !this.retiring.has(lease)) return;
    this.retiring.delete(lease);
    if (lease.held === 0) return;
    const spent = lease.spent;
    lease.settling += spent;
    lease.spent = 0;
    try {
      await this.ledger.settle({ leaseId: lease.id, spent, returned: 0, kind: 'request', close: true, ttlMs: this.settings.ttlMs });
      lease.held = 0;
    } catch (error) {
      lease.spent += spent;
      this.retiring.add(lease); // tried again at the next tick; the lease's TTL bounds it
      this.onError('close', error);
    } finally {
      lease.settling -= spent;
    }
  }

  private retire(lease: Lease): void {
    if (this.leases.get(lease.key) === lease) this.leases.delete(lease.key);
    if (lease.retired) return;
    lease.retired = true;
    this.rememberSize(lease);
    this.retiring.add(lease);
    // Waiters of a retired lease go to its successor.
    for (const waiter of lease.waiters.splice(0)) waiter.reject(new LeaseRetired());
  }

  /** The ledger swept the lease (it expired): its units are back there; nothing here counts any more. */
  private forget(lease: Lease): void {
    lease.gone = true;
    this.retire(lease);
    this.retiring.delete(lease);
  }

  /**
   * A lease's first block: 1 unit, or half the last block of the key's lease retired within
   * RECENT_SIZE_MS — an account whose traffic pauses (and whose lease closed when idle) does not
   * climb from one unit again, one wait for the ledger per doubling.
   */
  private startingSize(key: string): number {
    const recent = this.recentSizes.get(key);
    if (!recent) return 1;
    this.recentSizes.delete(key);
    return this.clock() - recent.at < RECENT_SIZE_MS ? Math.max(1, recent.size >> 1) : 1;
  }

  private rememberSize(lease: Lease): void {
    if (lease.lastGrantAt === 0) return;
    const now = this.clock();
    this.recentSizes.delete(lease.key);
    this.recentSizes.set(lease.key, { size: lease.size, at: now });
    for (const [key, recent] of this.recentSizes) {
      if (now - recent.at < RECENT_SIZE_MS && this.recentSizes.size <= MAX_RECENT_SIZES) break;
      this.recentSizes.delete(key);
    }
  }

  private track(work: Promise<void>): void {
    this.pending.add(work);
    void work.finally(() => this.pending.delete(work));
  }
}

/**
 * The block a lease asks for next, from the last one's size and how long it lasted: twice as
 * large if it was spent within `hotMs`, as large within 2 × `hotMs`, half as large otherwise.
 * (A lease only lives while its account keeps using it: `idleMs` without a request closes it.)
 */
export function nextBlockSize(size: number, lastedMs: number, settings: Pick<LeaseSettings, 'hotMs' | 'maxUnits'>): number {
  if (lastedMs < settings.hotMs) return Math.min(settings.maxUnits, size * 2);
  if (lastedMs < 2 * settings.hotMs) return Math.min(settings.maxUnits, size);
  return Math.max(1, size >> 1);
}

/** A take that waited on a lease which was retired meanwhile: take again (from its successor). */
export class LeaseRetired extends Error {
  constructor() {
    super('lease retired while waiting');
  }
}
