import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Usage per UTC day, for the account overview's history: `usage_daily` holds, per account and
 * day, the units charged as API requests and the rest (deliveries, and what an operator added).
 * A trigger on `usage_ledger` writes it in the statement that charges (any change that raises
 * `used`), in the same transaction, so the days always add up to what was charged; the ledger's
 * own code is unchanged. The day is the transaction's UTC date, kept inside the row's billing
 * period (a charge committed just after midnight on the 1st for the month before counts on that
 * month's last day). A lowered `used` (an operator's `usage:set`) changes no day. Days before this
 * migration have no row.
 */
export class UsageDaily1765050000000 implements MigrationInterface {
  name = 'UsageDaily1765050000000';

  public async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE usage_daily (
        account_id uuid NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
        day date NOT NULL,
        requests integer NOT NULL DEFAULT 0,
        deliveries integer NOT NULL DEFAULT 0,
        PRIMARY KEY (account_id, day)
      )`);
    await q.query(`
      CREATE FUNCTION usage_daily_record() RETURNS trigger LANGUAGE plpgsql AS $$
      DECLARE
        added integer := NEW.used - CASE WHEN TG_OP = 'INSERT' THEN 0 ELSE OLD.used END;
        added_requests integer := LEAST(added, GREATEST(0, NEW.requests - CASE WHEN TG_OP = 'INSERT' THEN 0 ELSE OLD.requests END));
        today date := (now() AT TIME ZONE 'UTC')::date;
      BEGIN
        IF added > 0 THEN
          INSERT INTO usage_daily AS d (account_id, day, requests, deliveries)
          VALUES (NEW.account_id,
                  LEAST(GREATEST(today, NEW.period), (NEW.period + interval '1 month' - interval '1 day')::date),
                  added_requests, added - added_requests)
          ON CONFLICT (account_id, day) DO UPDATE
            SET requests = d.requests + EXCLUDED.requests, deliveries = d.deliveries + EXCLUDED.deliveries;
        END IF;
        RETURN NULL;
      END $$`);
    await q.query(`
      CREATE TRIGGER usage_ledger_daily AFTER INSERT OR UPDATE OF used ON usage_ledger
      FOR EACH ROW EXECUTE FUNCTION usage_daily_record()`);
  }

  public async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TRIGGER IF EXISTS usage_ledger_daily ON usage_ledger`);
    await q.query(`DROP FUNCTION IF EXISTS usage_daily_record()`);
    await q.query(`DROP TABLE IF EXISTS usage_daily`);
  }
}
