import { Normalizer } from './normalizer';

const normalizer = new Normalizer({
  makes: [
    { id: 1, name: 'Porsche' },
    { id: 2, name: 'Chevrolet' },
  ],
  makeAliases: [
    { alias: 'chevy', makeId: 2, excluded: false },
    { alias: 'memorabilia', makeId: null, excluded: true },
  ],
  models: [
    { id: 10, makeId: 1, name: '911' },
    { id: 11, makeId: 1, name: '911 Turbo' },
    { id: 20, makeId: 2, name: 'Corvette' },
  ],
  modelAliases: [{ makeId: 2, alias: 'vette', modelId: 20 }],
});

describe('Normalizer', () => {
  it('finds canonical makes case-insensitively, trimmed', () => {
    expect(normalizer.normalize('  PORSCHE ', '911')).toEqual({ make: 'Porsche', model: '911', excluded: false });
  });

  it('maps aliases to their canonical make and model', () => {
    expect(normalizer.normalize('Chevy', 'Vette')).toEqual({ make: 'Chevrolet', model: 'Corvette', excluded: false });
  });

  it('takes the longest model that starts the listed model on a word boundary', () => {
    expect(normalizer.normalize('Porsche', '911 Turbo S Cabriolet').model).toBe('911 Turbo');
    expect(normalizer.normalize('Porsche', '911 Carrera').model).toBe('911');
    expect(normalizer.normalize('Porsche', '9110').model).toBeNull();
  });

  it('unknown make → null names, not excluded', () => {
    expect(normalizer.normalize('Trabant', '601')).toEqual({ make: null, model: null, excluded: false });
    expect(normalizer.normalize(null, null)).toEqual({ make: null, model: null, excluded: false });
  });

  it('a confirmed exclusion → null names, excluded', () => {
    expect(normalizer.normalize('Memorabilia', 'Sign')).toEqual({ make: null, model: null, excluded: true });
  });
});
