import {
  aliasKey,
  findMakeQuery,
  makeAliasEntries,
  MAKES,
  modelAliasEntries,
  PG_POOL,
  runMigrations,
  SOURCES,
  withTransaction,
} from '@cars/persistence';
import { Inject, Injectable } from '@nestjs/common';
import { Pool } from 'pg';
import { DataSource } from 'typeorm';
import { poolOf } from '../database/pg';
import { Normalizer } from './normalizer';
import { loadNormalizationTables } from './reference-cache';

export interface RebuildResult {
  scanned: number;
  updated: number;
  batches: number;
}

export interface ReferenceLoadResult {
  sources: number;
  makes: number;
  makeAliases: number;
  models: number;
  modelAliases: number;
}

/**
 * Operator maintenance of normalization: loading the reference catalog, aliases and exclusions,
 * and recomputing `ocd_make_name` / `ocd_model_name` of stored auctions. None of it writes
 * events (normalization-only changes fire nothing) nor touches `updated_at`.
 */
@Injectable()
export class NormalizationService {
  private readonly pool: Pool;

  /** Takes the process's pool (injected), or a DataSource (tools and tests). */
  constructor(@Inject(PG_POOL) database: Pool | DataSource) {
    this.pool = poolOf(database);
  }

  /** Loads sources, makes, models and their aliases from the shipped catalog; keeps operator edits. */
  async loadReference(): Promise<ReferenceLoadResult> {
    return withTransaction(this.pool, async (client) => {
      const sources = await client.query(
        `INSERT INTO sources (id, name, live, timezone)
         SELECT * FROM unnest($1::text[], $2::text[], $3::boolean[], $4::text[])
         ON CONFLICT (id) DO UPDATE SET name = EXCLUDED.name, live = EXCLUDED.live, timezone = EXCLUDED.timezone
         WHERE (sources.name, sources.live, sources.timezone) IS DISTINCT FROM (EXCLUDED.name, EXCLUDED.live, EXCLUDED.timezone)`,
        [SOURCES.map((s) => s.id), SOURCES.map((s) => s.name), SOURCES.map((s) => s.live), SOURCES.map((s) => s.timezone)],
      );
      const makes = await client.query(
        `INSERT INTO makes (name) SELECT unnest($1::text[]) ON CONFLICT DO NOTHING`,
        [MAKES.map((m) => m.name)],
      );
      const aliases = makeAliasEntries();
      const makeAliases = await client.query(
        `INSERT INTO make_aliases (alias, make_id, excluded)
         SELECT x.alias, m.id, x.excluded
         FROM unnest($1::text[], $2::text[], $3::boolean[]) AS x(alias, make, excluded)
         LEFT JOIN makes m ON lower(m.name) = lower(x.make)
         WHERE x.excluded OR m.id IS NOT NULL
         ON CONFLICT (alias) DO NOTHING`,
        [aliases.map((a) => a.alias), aliases.map((a) => a.make), aliases.map((a) => a.excluded)],
      );
      const models = MAKES.flatMap((make) => make.models.map((model) => [make.name, model.name] as const));
      const insertedModels = await client.query(
        `INSERT INTO models (make_id, name)
         SELECT m.id, x.model FROM unnest($1::text[], $2::text[]) AS x(make, model)
         JOIN makes m ON lower(m.name) = lower(x.make)
         ON CONFLICT DO NOTHING`,
        [models.map((m) => m[0]), models.map((m) => m[1])],
      );
      const modelAliases = modelAliasEntries();
      const insertedModelAliases = await client.query(
        `INSERT INTO model_aliases (make_id, alias, model_id)
         SELECT m.id, x.alias, mo.id
         FROM unnest($1::text[], $2::text[], $3::text[]) AS x(make, alias, model)
         JOIN makes m ON lower(m.name) = lower(x.make)
         JOIN models mo ON mo.make_id = m.id AND mo.name = x.model
         ON CONFLICT DO NOTHING`,
        [modelAliases.map((a) => a.make), modelAliases.map((a) => a.alias), modelAliases.map((a) => a.model)],
      );
      return {
        sources: sources.rowCount ?? 0,
        makes: makes.rowCount ?? 0,
        makeAliases: makeAliases.rowCount ?? 0,
        models: insertedModels.rowCount ?? 0,
        modelAliases: insertedModelAliases.rowCount ?? 0,
      };
    });
  }

  /**
   * Maps a listing spelling to a canonical make (found case-insensitively). An unknown make is
   * an error unless `create` is set, so a typo never adds a make to /makes. Re-normalizes the
   * stored auctions listed under that spelling (no events).
   */
  async setAlias(
    alias: string,
    make: string,
    create = false,
  ): Promise<{ alias: string; make: string; make_created: boolean; auctions_updated: number }> {
    const key = aliasKey(alias);
    if (key === '') throw new Error('the alias is empty');
    const target = await withTransaction(this.pool, async (client) => {
      let found = (
        await client.query<{ id: number; name: string }>(findMakeQuery(make.trim()))
      ).rows[0];
      let created = false;
      if (!found) {
        if (!create) throw new Error(`unknown make "${make}": pass --create to add it as a canonical make`);
        found = (await client.query<{ id: number; name: string }>(`INSERT INTO makes (name) VALUES ($1) RETURNING id, name`, [make.trim()])).rows[0];
        created = true;
      }
      await client.query(
        `INSERT INTO make_aliases (alias, make_id, excluded) VALUES ($1, $2, false)
         ON CONFLICT (alias) DO UPDATE SET make_id = EXCLUDED.make_id, excluded = false`,
        [key, found.id],
      );
      return { name: found.name, created };
    });
    const rebuilt = await this.rebuild({ listingMakeKey: key });
    return { alias: key, make: target.name, make_created: target.created, auctions_updated: rebuilt.updated };
  }

  /** Records a confirmed exclusion (not a vehicle make): stored auctions keep their rows, events are suppressed. */
  async exclude(alias: string): Promise<{ alias: string; excluded: true; auctions_updated: number }> {
    const key = aliasKey(alias);
    if (key === '') throw new Error('the alias is empty');
    await this.pool.query(
      `INSERT INTO make_aliases (alias, make_id, excluded) VALUES ($1, NULL, true)
       ON CONFLICT (alias) DO UPDATE SET make_id = NULL, excluded = true`,
      [key],
    );
    const rebuilt = await this.rebuild({ listingMakeKey: key });
    return { alias: key, excluded: true, auctions_updated: rebuilt.updated };
  }

  /**
   * Recomputes the canonical make/model of every stored auction (or of those listed under one
   * spelling) from the alias tables, in batches by id, each its own short transaction. Writes
   * only rows whose names change; emits no events.
   */
  async rebuild(options: { batchSize?: number; listingMakeKey?: string } = {}): Promise<RebuildResult> {
    const batchSize = options.batchSize ?? 5000;
    const client = await this.pool.connect();
    let normalizer: Normalizer;
    try {
      normalizer = new Normalizer(await loadNormalizationTables(client));
    } finally {
      client.release();
    }
    const result: RebuildResult = { scanned: 0, updated: 0, batches: 0 };
    let lastId = '0';
    for (;;) {
      const { rows } = await this.pool.query<{
        id: string;
        listing_make: string | null;
        listing_model: string | null;
        ocd_make_name: string | null;
        ocd_model_name: string | null;
      }>(
        `SELECT id::text AS id, listing_make, listing_model, ocd_make_name, ocd_model_name FROM auctions
         WHERE id > $1 AND ($3::text IS NULL OR lower(btrim(listing_make)) = $3)
         ORDER BY auctions.id LIMIT $2`,
        [lastId, batchSize, options.listingMakeKey ?? null],
      );
      if (rows.length === 0) break;
      result.batches += 1;
      result.scanned += rows.length;
      lastId = rows[rows.length - 1].id;
      const changed = rows
        .map((row) => ({ row, names: normalizer.normalize(row.listing_make, row.listing_model) }))
        .filter(({ row, names }) => row.ocd_make_name !== names.make || row.ocd_model_name !== names.model);
      if (changed.length > 0) {
        const updated = await this.pool.query(
          `UPDATE auctions a SET ocd_make_name = x.make, ocd_model_name = x.model
           FROM unnest($1::bigint[], $2::text[], $3::text[]) AS x(id, make, model)
           WHERE a.id = x.id`,
          [changed.map((c) => c.row.id), changed.map((c) => c.names.make), changed.map((c) => c.names.model)],
        );
        result.updated += updated.rowCount ?? 0;
      }
      if (rows.length < batchSize) break;
    }
    return result;
  }
}

/**
 * The deploy path's database step (`admin db:migrate`: the k8s migrations Job, compose's
 * `migrate` service, `start:services`): applies the migrations and loads the shipped reference
 * catalog (sources, makes, models, aliases). Idempotent; operator decisions (aliases,
 * exclusions, makes added by hand) are kept, since the catalog only inserts what is missing.
 */
export async function migrateAndLoadReference(
  dataSource: DataSource,
): Promise<{ applied: string[]; reference: ReferenceLoadResult }> {
  await runMigrations(dataSource);
  const reference = await new NormalizationService(dataSource).loadReference();
  const rows: { name: string }[] = await dataSource.query(`SELECT name FROM schema_migrations ORDER BY id`);
  return { applied: rows.map((r) => r.name), reference };
}
