/**
 * Make/model normalization from the alias tables (pure: built from rows, no I/O).
 *
 * Make: the listed make is looked up case-insensitively (trimmed, lower-cased) in `make_aliases`
 * first — an alias maps to a canonical make or is a confirmed exclusion — then among the
 * canonical names of `makes`. Unknown → null. Model (only under a known make): `model_aliases`,
 * then the canonical model names of that make, and else the longest of those that is a leading
 * run of whole words of the listed model ("911 Carrera 4S" → "911"). Unknown → null.
 */
import { aliasKey } from '@cars/persistence';

export interface NormalizationTables {
  makes: readonly { id: number; name: string }[];
  makeAliases: readonly { alias: string; makeId: number | null; excluded: boolean }[];
  models: readonly { id: number; makeId: number; name: string }[];
  modelAliases: readonly { makeId: number; alias: string; modelId: number }[];
}

export interface NormalizedNames {
  make: string | null;
  model: string | null;
  /** The listed make is a confirmed exclusion: stored, but its events are suppressed. */
  excluded: boolean;
}


const UNKNOWN: NormalizedNames = Object.freeze({ make: null, model: null, excluded: false });
const EXCLUDED: NormalizedNames = Object.freeze({ make: null, model: null, excluded: true });

export class Normalizer {
  private readonly makeNames = new Map<number, string>();
  private readonly makeByKey = new Map<string, number | null>();
  private readonly modelNames = new Map<number, string>();
  private readonly modelByKey = new Map<string, number>();
  private readonly cache = new Map<string, NormalizedNames>();

  constructor(tables: NormalizationTables) {
    for (const make of tables.makes) {
      this.makeNames.set(make.id, make.name);
      this.makeByKey.set(aliasKey(make.name), make.id);
    }
    // Aliases win over canonical names (an operator may exclude or re-map a spelling).
    for (const alias of tables.makeAliases) this.makeByKey.set(aliasKey(alias.alias), alias.excluded ? null : alias.makeId);
    for (const model of tables.models) {
      this.modelNames.set(model.id, model.name);
      this.modelByKey.set(`${model.makeId}|${aliasKey(model.name)}`, model.id);
    }
    for (const alias of tables.modelAliases) {
      const key = `${alias.makeId}|${aliasKey(alias.alias)}`;
      if (!this.modelByKey.has(key)) this.modelByKey.set(key, alias.modelId);
    }
  }

  static empty(): Normalizer {
    return new Normalizer({ makes: [], makeAliases: [], models: [], modelAliases: [] });
  }

  normalize(make: string | null | undefined, model: string | null | undefined): NormalizedNames {
    if (make == null || make.trim() === '') return UNKNOWN;
    const cacheKey = `${make}\u0000${model ?? ''}`;
    const cached = this.cache.get(cacheKey);
    if (cached) return cached;
    const result = this.compute(make, model);
    if (this.cache.size > 50000) this.cache.clear();
    this.cache.set(cacheKey, result);
    return result;
  }

  private compute(make: string, model: string | null | undefined): NormalizedNames {
    const key = aliasKey(make);
    if (!this.makeByKey.has(key)) return UNKNOWN;
    const makeId = this.makeByKey.get(key);
    if (makeId == null) return EXCLUDED;
    const makeName = this.makeNames.get(makeId) ?? null;
    if (makeName == null) return UNKNOWN;
    return { make: makeName, model: this.model(makeId, model), excluded: false };
  }

  private model(makeId: number, model: string | null | undefined): string | null {
    if (model == null) return null;
    const words = aliasKey(model).split(' ');
    for (let n = words.length; n > 0; n -= 1) {
      const id = this.modelByKey.get(`${makeId}|${words.slice(0, n).join(' ')}`);
      if (id !== undefined) return this.modelNames.get(id) ?? null;
    }
    return null;
  }
}
