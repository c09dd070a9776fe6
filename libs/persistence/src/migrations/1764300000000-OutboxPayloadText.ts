import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * `events.payload` becomes `json` (the text as written) instead of `jsonb`: the envelope is
 * written once and read back only to be published, byte for byte. `jsonb` cost a full parse into
 * its binary form on every insert, and the relay then had to parse it again and re-serialize it
 * in the canonical member order (jsonb does not keep key order); `json` keeps the text, so the
 * relay publishes what the change-detector wrote. Existing rows are rewritten in the canonical
 * member order (`id`, `type`, `api_version`, `created_at`, `data`).
 */
export class OutboxPayloadText1764300000000 implements MigrationInterface {
  name = 'OutboxPayloadText1764300000000';

  public async up(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE events ALTER COLUMN payload TYPE json USING json_build_object(
        'id', payload->'id', 'type', payload->'type', 'api_version', payload->'api_version',
        'created_at', payload->'created_at', 'data', payload->'data')`);
  }

  public async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE events ALTER COLUMN payload TYPE jsonb USING payload::jsonb`);
  }
}
