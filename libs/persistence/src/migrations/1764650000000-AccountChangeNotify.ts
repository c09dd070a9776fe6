import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Account changes are broadcast by the database itself: whatever changes an account or a key
 * (the admin CLI, the expiry job, a console), every gateway hears `account_changes` at commit and
 * forgets what it cached about that account or key. The payload is JSON:
 * `{"account_id": "…"}` or `{"account_id": "…", "key_hash": "…"}`.
 */
export class AccountChangeNotify1764650000000 implements MigrationInterface {
  name = 'AccountChangeNotify1764650000000';

  public async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE FUNCTION notify_account_change() RETURNS trigger LANGUAGE plpgsql AS $$
      DECLARE
        row_data record;
      BEGIN
        IF TG_OP = 'DELETE' THEN row_data := OLD; ELSE row_data := NEW; END IF;
        IF TG_TABLE_NAME = 'api_keys' THEN
          PERFORM pg_notify('account_changes',
            json_build_object('account_id', row_data.account_id, 'key_hash', row_data.key_hash)::text);
        ELSE
          PERFORM pg_notify('account_changes', json_build_object('account_id', row_data.id)::text);
        END IF;
        RETURN NULL;
      END $$`);
    await q.query(`
      CREATE TRIGGER accounts_notify_change
      AFTER UPDATE OF email, email_verified, plan, plan_expires_at OR DELETE ON accounts
      FOR EACH ROW EXECUTE FUNCTION notify_account_change()`);
    await q.query(`
      CREATE TRIGGER api_keys_notify_change
      AFTER INSERT OR UPDATE OF revoked_at, key_hash, account_id OR DELETE ON api_keys
      FOR EACH ROW EXECUTE FUNCTION notify_account_change()`);
  }

  public async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TRIGGER IF EXISTS api_keys_notify_change ON api_keys`);
    await q.query(`DROP TRIGGER IF EXISTS accounts_notify_change ON accounts`);
    await q.query(`DROP FUNCTION IF EXISTS notify_account_change()`);
  }
}
