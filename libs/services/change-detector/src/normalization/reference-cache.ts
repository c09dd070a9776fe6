import { Injectable } from '@nestjs/common';
import { isSourceId, sourceById } from '@cars/persistence';
import { PoolClient } from 'pg';
import { NormalizationTables, Normalizer } from './normalizer';
import type { SourceContext } from './source-context';

export interface ReferenceSnapshot {
  version: string;
  normalizer: Normalizer;
  sources: ReadonlyMap<string, SourceContext>;
}

export async function loadNormalizationTables(client: Pick<PoolClient, 'query'>): Promise<NormalizationTables> {
  // One query at a time: the client may be a transaction's.
  const makes = await client.query<{ id: number; name: string }>(`SELECT id, name FROM makes`);
  const makeAliases = await client.query<{ alias: string; makeId: number | null; excluded: boolean }>(
    `SELECT alias, make_id AS "makeId", excluded FROM make_aliases`,
  );
  const models = await client.query<{ id: number; makeId: number; name: string }>(
    `SELECT id, make_id AS "makeId", name FROM models`,
  );
  const modelAliases = await client.query<{ makeId: number; alias: string; modelId: number }>(
    `SELECT make_id AS "makeId", alias, model_id AS "modelId" FROM model_aliases`,
  );
  return { makes: makes.rows, makeAliases: makeAliases.rows, models: models.rows, modelAliases: modelAliases.rows };
}

export async function loadSourceContexts(client: Pick<PoolClient, 'query'>): Promise<Map<string, SourceContext>> {
  const { rows } = await client.query<{ id: string; timezone: string }>(`SELECT id, timezone FROM sources`);
  return new Map(
    rows.map((row) => {
      const known = isSourceId(row.id) ? sourceById(row.id) : null;
      return [
        row.id,
        {
          id: row.id,
          timezone: row.timezone,
          unsoldReportsHighBidOnly: known?.unsoldReportsHighBidOnly ?? false,
          defaultCurrency: known?.currencies[0] ?? null,
        },
      ];
    }),
  );
}

/**
 * The normalization tables and sources, cached per process and reloaded when the
 * `reference_versions` counter (bumped by triggers on every change) moves. Read inside the
 * caller's transaction, so a batch sees one consistent version.
 */
@Injectable()
export class ReferenceCache {
  private snapshot: ReferenceSnapshot | null = null;

  async get(client: PoolClient, version?: string): Promise<ReferenceSnapshot> {
    const current = version ?? (await ReferenceCache.readVersion(client));
    if (this.snapshot?.version === current) return this.snapshot;
    const tables = await loadNormalizationTables(client);
    const sources = await loadSourceContexts(client);
    this.snapshot = { version: current, normalizer: new Normalizer(tables), sources };
    return this.snapshot;
  }

  static async readVersion(client: Pick<PoolClient, 'query'>): Promise<string> {
    const { rows } = await client.query<{ version: string }>(
      `SELECT version::text AS version FROM reference_versions WHERE name = 'normalization'`,
    );
    return rows[0]?.version ?? '0';
  }
}
