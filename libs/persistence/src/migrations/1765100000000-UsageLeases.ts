import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * `usage_leases`: blocks of allowance a gateway reserved in `usage_ledger` in one statement and
 * spends in memory (docs/adr/0007-metering-leases.md). `units` is what the lease still holds in
 * the ledger row's `reserved`: it falls as the gateway settles spent units into `used` and gives
 * unspent ones back. A gateway renews `expires_at` while it lives; a lease past it belongs to a
 * gateway that died or lost the database, and any gateway's sweep gives its units back.
 */
export class UsageLeases1765100000000 implements MigrationInterface {
  name = 'UsageLeases1765100000000';

  public async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE usage_leases (
        id uuid PRIMARY KEY,
        account_id uuid NOT NULL,
        period date NOT NULL,
        units integer NOT NULL,
        holder text NOT NULL,
        expires_at timestamptz NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        FOREIGN KEY (account_id, period) REFERENCES usage_ledger (account_id, period) ON DELETE CASCADE,
        CONSTRAINT usage_leases_units_check CHECK (units >= 0)
      )`);
    await q.query(`CREATE INDEX usage_leases_account ON usage_leases (account_id, period)`);
    await q.query(`CREATE INDEX usage_leases_expires ON usage_leases (expires_at)`);
  }

  public async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE IF EXISTS usage_leases`);
  }
}
