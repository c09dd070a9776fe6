import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The read side and accounts: reference tables (sources, makes, aliases, models), auctions and
 * bids with their identity records, accounts with API keys and the usage ledger, and the events
 * outbox. Query-specific indexes live in their own migrations.
 */
export class InitialSchema1763700000000 implements MigrationInterface {
  name = 'InitialSchema1763700000000';

  public async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE EXTENSION IF NOT EXISTS pg_trgm`);

    await q.query(`
      CREATE TABLE sources (
        id text PRIMARY KEY,
        name text NOT NULL,
        live boolean NOT NULL DEFAULT false,
        timezone text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);

    await q.query(`
      CREATE TABLE makes (
        id serial PRIMARY KEY,
        name text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE UNIQUE INDEX makes_name_key ON makes (name)`);
    await q.query(`CREATE UNIQUE INDEX makes_name_lower_key ON makes (lower(name))`);

    // alias is stored lower-cased and trimmed; an alias either maps to a make or is excluded.
    await q.query(`
      CREATE TABLE make_aliases (
        alias text PRIMARY KEY,
        make_id integer REFERENCES makes (id) ON DELETE CASCADE,
        excluded boolean NOT NULL DEFAULT false,
        created_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT make_aliases_target_check CHECK ((make_id IS NULL) = excluded)
      )`);

    await q.query(`
      CREATE TABLE models (
        id serial PRIMARY KEY,
        make_id integer NOT NULL REFERENCES makes (id) ON DELETE CASCADE,
        name text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT models_make_name_key UNIQUE (make_id, name)
      )`);
    await q.query(`
      CREATE TABLE model_aliases (
        make_id integer NOT NULL REFERENCES makes (id) ON DELETE CASCADE,
        alias text NOT NULL,
        model_id integer NOT NULL REFERENCES models (id) ON DELETE CASCADE,
        PRIMARY KEY (make_id, alias)
      )`);

    await q.query(`
      CREATE TABLE auctions (
        id bigserial PRIMARY KEY,
        source text NOT NULL REFERENCES sources (id),
        source_auction_id text NOT NULL,
        url text,
        title text,
        source_status text NOT NULL,
        auction_status text,
        is_live boolean NOT NULL DEFAULT false,
        price bigint,
        currency char(3),
        price_usd bigint,
        auction_end_date date,
        auction_end_at timestamptz,
        auction_end_local timestamp,
        mileage integer,
        mileage_unit text,
        vin text,
        title_status text,
        city text,
        state text,
        zip text,
        country_code text,
        seller_username text,
        seller_type text,
        year smallint,
        has_reserve boolean,
        listing_make text,
        listing_model text,
        ocd_make_name text,
        ocd_model_name text,
        engine text,
        drivetrain text,
        transmission text,
        body_style text,
        exterior_color text,
        standard_exterior_color text,
        interior_color text,
        standard_interior_color text,
        description text,
        ownership_history text,
        modifications text[] NOT NULL DEFAULT '{}',
        known_flaws text[] NOT NULL DEFAULT '{}',
        recent_service_history text[] NOT NULL DEFAULT '{}',
        listing_details text[] NOT NULL DEFAULT '{}',
        featured_image_url text,
        views integer,
        watches integer,
        likes integer,
        comments integer,
        bid_count integer,
        unique_bidder_count integer,
        sale_type text,
        price_type text,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        observed_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT auctions_source_auction_key UNIQUE (source, source_auction_id)
      )`);

    await q.query(`
      CREATE TABLE bids (
        id bigserial PRIMARY KEY,
        auction_id bigint NOT NULL REFERENCES auctions (id) ON DELETE CASCADE,
        source text NOT NULL,
        source_bid_id text NOT NULL,
        bidder_name text,
        amount bigint,
        currency char(3),
        bid_at timestamptz,
        bid_at_local timestamp,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT bids_source_bid_key UNIQUE (source, source_bid_id)
      )`);
    await q.query(`CREATE INDEX bids_auction_bid_at_idx ON bids (auction_id, bid_at, id)`);

    // Compact identity records: kept after retention removes bids so a bid never fires twice.
    await q.query(`
      CREATE TABLE bid_identities (
        source text NOT NULL,
        source_bid_id text NOT NULL,
        bid_id bigint NOT NULL,
        auction_id bigint NOT NULL,
        first_seen_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (source, source_bid_id)
      )`);

    await q.query(`
      CREATE TABLE accounts (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        email text NOT NULL,
        email_verified boolean NOT NULL DEFAULT false,
        plan text NOT NULL,
        plan_expires_at timestamptz,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT accounts_plan_check CHECK (plan IN ('free', '1k', '10k', '100k'))
      )`);
    await q.query(`CREATE UNIQUE INDEX accounts_email_key ON accounts (lower(email))`);

    await q.query(`
      CREATE TABLE api_keys (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        account_id uuid NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
        prefix text NOT NULL,
        key_hash text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        revoked_at timestamptz,
        last_used_at timestamptz,
        CONSTRAINT api_keys_prefix_key UNIQUE (prefix),
        CONSTRAINT api_keys_key_hash_key UNIQUE (key_hash)
      )`);
    await q.query(`CREATE INDEX api_keys_account_idx ON api_keys (account_id)`);

    // One row per account and billing period (calendar month, UTC): units used and reserved.
    await q.query(`
      CREATE TABLE usage_ledger (
        account_id uuid NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
        period date NOT NULL,
        used integer NOT NULL DEFAULT 0,
        reserved integer NOT NULL DEFAULT 0,
        updated_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (account_id, period),
        CONSTRAINT usage_ledger_used_check CHECK (used >= 0),
        CONSTRAINT usage_ledger_reserved_check CHECK (reserved >= 0)
      )`);

    // Outbox and event store. payload is the public envelope; the routing columns carry what
    // webhook filters need (canonical make, source, auction id).
    await q.query(`
      CREATE TABLE events (
        seq bigserial PRIMARY KEY,
        id text NOT NULL,
        type text NOT NULL,
        api_version text NOT NULL,
        created_at timestamptz NOT NULL,
        payload jsonb NOT NULL,
        auction_id bigint,
        make text,
        source text,
        published_at timestamptz,
        CONSTRAINT events_id_key UNIQUE (id)
      )`);
    await q.query(`CREATE INDEX events_unpublished_idx ON events (seq) WHERE published_at IS NULL`);
  }

  public async down(q: QueryRunner): Promise<void> {
    for (const table of [
      'events',
      'usage_ledger',
      'api_keys',
      'accounts',
      'bid_identities',
      'bids',
      'auctions',
      'model_aliases',
      'models',
      'make_aliases',
      'makes',
      'sources',
    ]) {
      await q.query(`DROP TABLE IF EXISTS ${table}`);
    }
  }
}
