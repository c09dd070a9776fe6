import type { LeaseGrant, LeaseRequest, LeaseSettlement } from '@cars/accounts';
import { LedgerBatches } from './ledger-batches';

const PERIOD = { key: '2026-11-01', end: new Date('2026-12-01T00:00:00Z') };

/** Statements recorded as batches; each answers when released (or at once). */
class Statements {
  grants: string[][] = [];
  settlements: string[][] = [];
  hold = false;
  fail = false;
  private held: (() => void)[] = [];

  async grant(requests: readonly LeaseRequest[]): Promise<LeaseGrant[]> {
    this.grants.push(requests.map((r) => r.leaseId));
    if (this.hold) await new Promise<void>((resolve) => this.held.push(resolve));
    if (this.fail) throw new Error('ledger unreachable');
    return requests.map((r) => ({ ok: true, period: r.period.key, periodEnd: r.period.end, units: r.want, limit: r.limit, consumed: r.want }));
  }

  async settle(settlements: readonly LeaseSettlement[]): Promise<Set<string>> {
    this.settlements.push(settlements.map((s) => s.leaseId));
    return new Set(settlements.filter((s) => s.leaseId !== 'swept').map((s) => s.leaseId));
  }

  release(): void {
    this.hold = false;
    for (const resolve of this.held.splice(0)) resolve();
  }
}

const request = (leaseId: string, want = 1): LeaseRequest => ({ leaseId, accountId: `account-${leaseId}`, period: PERIOD, limit: 1000, want });
const settlement = (leaseId: string): LeaseSettlement => ({ leaseId, spent: 1, returned: 0, kind: 'request', close: false, ttlMs: 30000 });
const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('LedgerBatches', () => {
  it('sends the grants requests wait for on the next turn, together; those arriving meanwhile go in one statement after it', async () => {
    const statements = new Statements();
    const batches = new LedgerBatches(statements);
    statements.hold = true;
    const first = [batches.grant(request('a'), false), batches.grant(request('b'), false)];
    await turn();
    expect(statements.grants).toEqual([['a', 'b']]);
    const second = [batches.grant(request('c'), false), batches.grant(request('d'), false), batches.grant(request('e'), false)];
    await turn();
    expect(statements.grants).toHaveLength(1); // one statement in flight at a time
    statements.release();
    const grants = await Promise.all([...first, ...second]);
    expect(grants.every((g) => g.ok)).toBe(true);
    expect(statements.grants).toEqual([['a', 'b'], ['c', 'd', 'e']]);
  });

  it('keeps grants asked for ahead for the tick, or sends them with a grant a request waits for', async () => {
    const statements = new Statements();
    const batches = new LedgerBatches(statements);
    const early = batches.grant(request('a', 8), true);
    await turn();
    expect(statements.grants).toEqual([]);
    batches.flush(false);
    await early;
    expect(statements.grants).toEqual([['a']]);
    const ahead = batches.grant(request('b', 8), true);
    const waited = batches.grant(request('c'), false);
    await Promise.all([ahead, waited]);
    expect(statements.grants).toEqual([['a'], ['b', 'c']]);
    // A request now waits for a block asked for ahead: hurried.
    const hurried = batches.grant(request('d', 8), true);
    batches.hurry();
    await hurried;
    expect(statements.grants.at(-1)).toEqual(['d']);
  });

  it('sends settlements only when the tick says so, all in one statement, and tells each whether its lease was known', async () => {
    const statements = new Statements();
    const batches = new LedgerBatches(statements);
    const known = [batches.settle(settlement('a')), batches.settle(settlement('swept')), batches.settle(settlement('b'))];
    batches.flush(false);
    await turn();
    expect(statements.settlements).toEqual([]);
    batches.flush(true);
    expect(await Promise.all(known)).toEqual([true, false, true]);
    expect(statements.settlements).toEqual([['a', 'swept', 'b']]);
  });

  it('fails every grant of a statement that fails, and sends everything at once after flushAlways (shutdown)', async () => {
    const statements = new Statements();
    const batches = new LedgerBatches(statements);
    statements.fail = true;
    const failed = [batches.grant(request('a'), false), batches.grant(request('b'), false)];
    await expect(Promise.all(failed)).rejects.toThrow('ledger unreachable');
    await expect(failed[1]).rejects.toThrow('ledger unreachable');
    statements.fail = false;
    const queued = batches.settle(settlement('a'));
    batches.flushAlways();
    expect(await queued).toBe(true);
    expect(await batches.grant(request('c', 8), true)).toMatchObject({ ok: true });
    expect(await batches.settle(settlement('c'))).toBe(true);
    await turn();
    expect(batches.busy).toBe(false);
  });
});
