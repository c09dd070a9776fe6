import type { LeaseGrant, LeaseRequest, LeaseSettlement } from '@cars/accounts';
import type { LeaseLedger } from './lease-book';

/** The ledger's batch statements (`leaseUsageBatch`, `settleLeases` in libs/accounts). */
export interface BatchStatements {
  grant(requests: readonly LeaseRequest[]): Promise<LeaseGrant[]>;
  settle(settlements: readonly LeaseSettlement[]): Promise<Set<string>>;
}

interface Queued<T, R> {
  item: T;
  resolve: (result: R) => void;
  reject: (error: unknown) => void;
}

/**
 * The lease book's ledger, many leases to a statement: what the ledger costs then depends on how
 * often the gateway writes, not on how many accounts it serves (1,000 accounts at one request a
 * second each would otherwise cost a grant or a settlement per request).
 *
 * - A grant a request waits for goes on the next turn of the event loop, with every grant queued
 *   by then; while a grant statement is in flight the next ones queue behind it and go together
 *   when it ends (a busy gateway's batches grow with its load).
 * - Grants asked for ahead (the lease still holds half a block) and settlements wait for `flush`
 *   — the meter's tick — or, for grants, for the next statement a request waits for.
 * - One statement of each kind in flight at a time.
 * - `flushAlways` (shutdown): from then on nothing waits for a tick.
 */
export class LedgerBatches implements LeaseLedger {
  private grants: Queued<LeaseRequest, LeaseGrant>[] = [];
  private settlements: Queued<LeaseSettlement, boolean>[] = [];
  private granting = false;
  private settling = false;
  /** A queued grant has a request waiting for it. */
  private urgent = false;
  private always = false;
  private scheduled = false;

  constructor(private readonly statements: BatchStatements) {}

  grant(request: LeaseRequest, ahead: boolean): Promise<LeaseGrant> {
    return new Promise((resolve, reject) => {
      this.grants.push({ item: request, resolve, reject });
      if (!ahead || this.always) this.hurry();
    });
  }

  settle(settlement: LeaseSettlement): Promise<boolean> {
    return new Promise((resolve, reject) => {
      this.settlements.push({ item: settlement, resolve, reject });
      if (this.always) this.schedule();
    });
  }

  hurry(): void {
    this.urgent = true;
    this.schedule();
  }

  /** Sends what waited for the tick: grants asked for ahead, and (`settlements`) the settlements. */
  flush(settlements: boolean): void {
    this.sendGrants();
    if (settlements) this.sendSettlements();
  }

  /** Shutdown: everything queued goes now, and whatever comes later goes at once. */
  flushAlways(): void {
    this.always = true;
    this.flush(true);
  }

  /** Statements queued or in flight (for tests). */
  get busy(): boolean {
    return this.granting || this.settling || this.grants.length > 0 || this.settlements.length > 0;
  }

  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      if (this.urgent || this.always) this.sendGrants();
      if (this.always) this.sendSettlements();
    });
  }

  private sendGrants(): void {
    if (this.granting || this.grants.length === 0) return;
    const batch = this.grants.splice(0);
    this.urgent = false;
    this.granting = true;
    void this.statements
      .grant(batch.map((q) => q.item))
      .then(
        (grants) => batch.forEach((q, i) => q.resolve(grants[i])),
        (error: unknown) => batch.forEach((q) => q.reject(error)),
      )
      .finally(() => {
        this.granting = false;
        if (this.urgent || this.always) this.sendGrants();
      });
  }

  private sendSettlements(): void {
    if (this.settling || this.settlements.length === 0) return;
    const batch = this.settlements.splice(0);
    this.settling = true;
    void this.statements
      .settle(batch.map((q) => q.item))
      .then(
        (known) => batch.forEach((q) => q.resolve(known.has(q.item.leaseId))),
        (error: unknown) => batch.forEach((q) => q.reject(error)),
      )
      .finally(() => {
        this.settling = false;
        if (this.always) this.sendSettlements();
      });
  }
}
