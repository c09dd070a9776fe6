import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';

const ROOT = join(__dirname, '..', '..');

/**
 * Who writes each table (docs/architecture.md quotes this map): the one lib whose code may
 * INSERT, UPDATE, DELETE, COPY or TRUNCATE it. Anyone else asks the owner — a call, or an event
 * (a plan change, for instance, is announced on `account_changes` and the webhooks service pauses
 * endpoints through libs/webhook-store). Tables kept by triggers belong to the owner of the
 * writes that fire them. Readers, for the record:
 * - accounts: libs/accounts, and libs/webhook-store (a plan's endpoint allowance);
 * - api_keys, usage_ledger, usage_leases, usage_daily, account_credentials, account_sessions, email_verification_tokens:
 *   libs/accounts only (the gateway, delivery and webhooks services go through its functions);
 * - instance_state: through libs/persistence's readInstanceState (libs/accounts' demo keys, apps/standalone);
 * - auctions, bids, models: change-detector, query, stats; makes also libs/persistence (the
 *   reference cache) and libs/webhook-store (make waits); make_aliases also libs/webhook-store;
 * - events: change-detector (outbox), libs/webhook-store (fan-out, make waits, retention);
 * - auction_data_version, description_tokens: query; stats_*: stats;
 * - bid_identities, ingest_outcomes, pending_observations, model_aliases, sources,
 *   reference_versions: change-detector only;
 * - webhook_subscriptions, webhook_deliveries: libs/webhook-store, and the delivery service's
 *   backlog metrics (libs/services/delivery/src/metrics).
 */
export const TABLE_OWNERS: Readonly<Record<string, string>> = {
  accounts: 'libs/accounts',
  api_keys: 'libs/accounts',
  usage_ledger: 'libs/accounts',
  usage_leases: 'libs/accounts',
  // Kept by a trigger on usage_ledger's charges (migration UsageDaily).
  usage_daily: 'libs/accounts',
  account_credentials: 'libs/accounts',
  account_sessions: 'libs/accounts',
  email_verification_tokens: 'libs/accounts',
  instance_state: 'libs/persistence',
  auctions: 'libs/services/change-detector',
  bids: 'libs/services/change-detector',
  bid_identities: 'libs/services/change-detector',
  events: 'libs/services/change-detector',
  ingest_outcomes: 'libs/services/change-detector',
  pending_observations: 'libs/services/change-detector',
  makes: 'libs/services/change-detector',
  make_aliases: 'libs/services/change-detector',
  models: 'libs/services/change-detector',
  model_aliases: 'libs/services/change-detector',
  sources: 'libs/services/change-detector',
  // Kept by triggers on the change-detector's writes (migrations ChangeDetection, QueryIndexes,
  // DescriptionTokens, StatsRollups).
  reference_versions: 'libs/services/change-detector',
  auction_data_version: 'libs/services/change-detector',
  description_tokens: 'libs/services/change-detector',
  stats_sales_totals: 'libs/services/change-detector',
  stats_sales_monthly: 'libs/services/change-detector',
  stats_price_buckets_by_make: 'libs/services/change-detector',
  stats_price_buckets_by_model: 'libs/services/change-detector',
  webhook_subscriptions: 'libs/webhook-store',
  webhook_deliveries: 'libs/webhook-store',
};

/**
 * Writes outside the owner that are known and explained. The list may only shrink: a spec below
 * fails when an entry no longer matches a write.
 */
export const SHARED_WRITES: readonly { table: string; writer: string; why: string }[] = [
  {
    table: 'events',
    writer: 'libs/webhook-store',
    why: 'the fan-out marks fanned_out_at in the statement that inserts the deliveries; retention removes events no delivery needs',
  },
];

const WRITE = /\b(INSERT\s+INTO|UPDATE|DELETE\s+FROM|COPY|TRUNCATE(?:\s+TABLE)?)\s+(?:ONLY\s+)?(?:public\.)?"?([a-z_][a-z0-9_]*)"?/g;
const TEST_FILE = /\.(spec|integration-spec|e2e-spec)\.ts$/;

function* sources(dir: string): Generator<string> {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      // Migrations, the testing lib and test helpers (a lib's `testing` folder) are not product code.
      if (entry.name === 'node_modules' || entry.name === 'migrations' || entry.name === 'testing') continue;
      yield* sources(path);
    } else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts') && !TEST_FILE.test(entry.name)) {
      yield path;
    }
  }
}

/** Every write statement's table in product code (apps and libs; not specs, migrations or the testing lib), with its file and line. */
export function writesIn(root: string): { table: string; file: string; line: number; statement: string }[] {
  const found: { table: string; file: string; line: number; statement: string }[] = [];
  for (const top of ['apps', 'libs']) {
    for (const file of sources(join(root, top))) {
      const text = readFileSync(file, 'utf8');
      for (const match of text.matchAll(WRITE)) {
        found.push({
          table: match[2],
          file: relative(root, file),
          line: text.slice(0, match.index).split('\n').length,
          statement: match[0].replace(/\s+/g, ' '),
        });
      }
    }
  }
  return found;
}

function tablesOfMigrations(root: string): string[] {
  const dir = join(root, 'libs', 'persistence', 'src', 'migrations');
  const tables = new Set<string>();
  for (const name of readdirSync(dir)) {
    for (const match of readFileSync(join(dir, name), 'utf8').matchAll(/CREATE TABLE (?:IF NOT EXISTS )?"?([a-z_][a-z0-9_]*)/g)) tables.add(match[1]);
  }
  return [...tables].sort();
}

const within = (file: string, folder: string) => file.startsWith(`${folder}/`);

describe('table ownership', () => {
  const writes = writesIn(ROOT).filter((w) => w.table in TABLE_OWNERS);

  it('names an owner for every table the migrations create, and no other', () => {
    expect(Object.keys(TABLE_OWNERS).sort()).toEqual(tablesOfMigrations(ROOT));
  });

  it('finds the writes it checks (the scan is not blind)', () => {
    const tables = new Set(writes.map((w) => w.table));
    for (const table of ['accounts', 'usage_ledger', 'auctions', 'events', 'webhook_subscriptions', 'webhook_deliveries']) {
      expect(tables).toContain(table);
    }
  });

  it('writes each table only from its owner', () => {
    const outside = writes
      .filter((w) => !within(w.file, TABLE_OWNERS[w.table]))
      .filter((w) => !SHARED_WRITES.some((s) => s.table === w.table && within(w.file, s.writer)))
      .map((w) => `${w.file}:${w.line} ${w.statement} (owner: ${TABLE_OWNERS[w.table]})`);
    expect(outside).toEqual([]);
  });

  it('lists only shared writes that still exist', () => {
    const stale = SHARED_WRITES.filter((s) => !writes.some((w) => w.table === s.table && within(w.file, s.writer)));
    expect(stale).toEqual([]);
  });
});
