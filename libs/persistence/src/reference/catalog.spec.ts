import {
  EXCLUDED_MAKE_ALIASES,
  MAKES,
  MAKE_NAMES,
  MODELS,
  aliasKey,
  findMake,
  makeAliasEntries,
  modelAliasEntries,
  modelMedianUsd,
  resolveMakeAlias,
  resolveModelAlias,
} from './catalog';

describe('catalog', () => {
  it('has at least 120 makes and 1,000 models with unique canonical names', () => {
    expect(MAKES.length).toBeGreaterThanOrEqual(120);
    expect(MODELS.length).toBeGreaterThanOrEqual(1000);
    expect(new Set(MAKES.map((m) => aliasKey(m.name))).size).toBe(MAKES.length);
    for (const make of MAKES) {
      expect(make.models.length).toBeGreaterThan(0);
      expect(new Set(make.models.map((m) => aliasKey(m.name))).size).toBe(make.models.length);
    }
  });

  it('includes the well-known collector makes and models', () => {
    const expectModels: Record<string, string[]> = {
      Porsche: ['911', '912', '914', '356', '944', '928', 'Boxster', 'Cayman'],
      Chevrolet: ['Corvette', 'Camaro', 'Chevelle'],
      Ford: ['Mustang', 'Bronco', 'GT'],
      Toyota: ['Land Cruiser', 'Supra'],
      Mazda: ['MX-5 Miata'],
    };
    for (const [make, models] of Object.entries(expectModels)) {
      const found = findMake(make);
      expect(found).toBeDefined();
      for (const model of models) expect(found!.models.map((m) => m.name)).toContain(model);
    }
    for (const make of ['Ferrari', 'Mercedes-Benz', 'BMW', 'Jaguar', 'Aston Martin', 'Land Rover', 'Alfa Romeo', 'Lotus', 'Datsun', 'Austin-Healey', 'MG', 'Triumph', 'Shelby', 'International Harvester', 'AMC', 'Studebaker', 'Packard', 'De Tomaso', 'Ducati']) {
      expect(MAKE_NAMES).toContain(make);
    }
  });

  it('gives every model sane years, prices and sigmas', () => {
    for (const model of MODELS) {
      expect(model.firstYear).toBeGreaterThanOrEqual(1900);
      expect(model.lastYear).toBeGreaterThanOrEqual(model.firstYear);
      expect(model.lastYear).toBeLessThanOrEqual(2026);
      expect(model.medianUsd).toBeGreaterThan(1000);
      expect(model.sigma).toBeGreaterThan(0.1);
      expect(model.sigma).toBeLessThan(1);
      for (let i = 1; i < model.anchors.length; i++) expect(model.anchors[i][0]).toBeGreaterThan(model.anchors[i - 1][0]);
    }
  });

  it('interpolates year-dependent medians in log space and clamps at the ends', () => {
    const nine11 = findMake('Porsche')!.models.find((m) => m.name === '911')!;
    const [first] = nine11.anchors;
    const last = nine11.anchors[nine11.anchors.length - 1];
    expect(modelMedianUsd(nine11, 1950)).toBe(first[1]);
    expect(modelMedianUsd(nine11, 2030)).toBe(last[1]);
    // 1974 is an anchor; 1976 lies between 1974 (80k) and 1978 (62k).
    expect(modelMedianUsd(nine11, 1974)).toBe(80000);
    const mid = modelMedianUsd(nine11, 1976);
    expect(mid).toBeLessThan(80000);
    expect(mid).toBeGreaterThan(62000);
    expect(mid).toBe(Math.round(Math.sqrt(80000 * 62000)));
    const flat = findMake('Porsche')!.models.find((m) => m.name === '912')!;
    expect(modelMedianUsd(flat, 1967)).toBe(flat.medianUsd);
  });

  it('lists unique make aliases, each canonical name included, plus excluded junk spellings', () => {
    const entries = makeAliasEntries();
    const aliases = entries.map((e) => e.alias);
    expect(new Set(aliases).size).toBe(aliases.length);
    for (const alias of aliases) expect(alias).toBe(aliasKey(alias));
    const byAlias = new Map(entries.map((e) => [e.alias, e]));
    for (const make of MAKES) expect(byAlias.get(aliasKey(make.name))).toEqual({ alias: aliasKey(make.name), make: make.name, excluded: false });
    const excluded = entries.filter((e) => e.excluded);
    expect(excluded.map((e) => e.alias).sort()).toEqual(EXCLUDED_MAKE_ALIASES.map(aliasKey).sort());
    for (const e of excluded) expect(e.make).toBeNull();
    // A meaningful number of real-world spellings.
    expect(entries.filter((e) => !e.excluded).length).toBeGreaterThan(MAKES.length * 2.5);
  });

  it('never lets one spelling mean two makes', () => {
    const owner = new Map<string, string>();
    for (const make of MAKES) {
      for (const spelling of [make.name, ...make.aliases]) {
        const key = aliasKey(spelling);
        const previous = owner.get(key);
        if (previous !== undefined) expect(previous).toBe(make.name);
        owner.set(key, make.name);
      }
    }
  });

  it('resolves the way sources write makes', () => {
    expect(resolveMakeAlias('Mercedes')).toEqual({ make: 'Mercedes-Benz' });
    expect(resolveMakeAlias('MB')).toEqual({ make: 'Mercedes-Benz' });
    expect(resolveMakeAlias('Merc')).toEqual({ make: 'Mercedes-Benz' });
    expect(resolveMakeAlias('VW')).toEqual({ make: 'Volkswagen' });
    expect(resolveMakeAlias('Chevy')).toEqual({ make: 'Chevrolet' });
    expect(resolveMakeAlias('Alfa')).toEqual({ make: 'Alfa Romeo' });
    expect(resolveMakeAlias('Land-Rover')).toEqual({ make: 'Land Rover' });
    expect(resolveMakeAlias('Porshe')).toEqual({ make: 'Porsche' });
    expect(resolveMakeAlias('Ferarri')).toEqual({ make: 'Ferrari' });
    expect(resolveMakeAlias('Lamborgini')).toEqual({ make: 'Lamborghini' });
    expect(resolveMakeAlias('  PORSCHE ')).toEqual({ make: 'Porsche' });
    expect(resolveMakeAlias('memorabilia')).toEqual({ excluded: true });
    expect(resolveMakeAlias('Parts')).toEqual({ excluded: true });
    expect(resolveMakeAlias('Zzyzx Motors')).toBeNull();
  });

  it('resolves model variants within a make, exactly or by prefix', () => {
    expect(resolveModelAlias('Mazda', 'Miata')).toBe('MX-5 Miata');
    expect(resolveModelAlias('Mazda', 'mx-5')).toBe('MX-5 Miata');
    expect(resolveModelAlias('Porsche', '911 Carrera')).toBe('911');
    expect(resolveModelAlias('Porsche', '911 Carrera 4S Cabriolet Aerokit')).toBe('911');
    expect(resolveModelAlias('Porsche', '930 Turbo')).toBe('911 Turbo');
    expect(resolveModelAlias('Porsche', 'Cayman GT4')).toBe('Cayman');
    expect(resolveModelAlias('Porsche', 'Miata')).toBeNull();
    expect(resolveModelAlias('Nope', '911')).toBeNull();
  });

  it('lists model aliases unique within each make, never shadowing a canonical name', () => {
    const entries = modelAliasEntries();
    const seen = new Set<string>();
    for (const e of entries) {
      const key = `${e.make}\u0000${e.alias}`;
      expect(seen.has(key)).toBe(false);
      seen.add(key);
    }
    const index = new Map(entries.map((e) => [`${e.make}\u0000${e.alias}`, e.model]));
    for (const model of MODELS) {
      expect(index.get(`${model.make}\u0000${aliasKey(model.name)}`)).toBe(model.name);
      for (const variant of model.variants) expect(index.get(`${model.make}\u0000${aliasKey(variant)}`)).toBe(model.name);
    }
    // Every variant belongs to exactly the model that lists it (no spelling shared inside a make).
    for (const make of MAKES) {
      const owner = new Map<string, string>();
      for (const model of make.models) {
        for (const spelling of [model.name, ...model.variants]) {
          const key = aliasKey(spelling);
          if (owner.has(key)) expect(owner.get(key)).toBe(model.name);
          owner.set(key, model.name);
        }
      }
    }
  });
});
