import { Rng } from './prng';
import { isValidVin, makeChassisNumber, makeVin, modelYearCode, vinCheckDigit } from './vin';

describe('VINs', () => {
  it('computes the North American check digit', () => {
    expect(vinCheckDigit('1M8GDM9AXKP042788')).toBe('X');
    expect(isValidVin('1M8GDM9AXKP042788')).toBe(true);
    expect(isValidVin('1M8GDM9A1KP042788')).toBe(false);
    expect(isValidVin('1M8GDM9AXKP04278')).toBe(false);
    expect(isValidVin('1M8GDM9AXKP04278O')).toBe(false);
  });

  it('codes model years on a 30-year cycle', () => {
    expect(modelYearCode(1981)).toBe('B');
    expect(modelYearCode(2000)).toBe('Y');
    expect(modelYearCode(2001)).toBe('1');
    expect(modelYearCode(2010)).toBe('A');
    expect(modelYearCode(2024)).toBe('R');
  });

  it('makes valid 17-character VINs from 1981 on', () => {
    const rng = new Rng('vin');
    for (let i = 0; i < 5000; i++) {
      const year = rng.int(1981, 2025);
      const vin = makeVin(rng, i % 2 === 0 ? ['WP0'] : [], i % 3 === 0 ? 'JP' : 'US', year);
      expect(vin).toHaveLength(17);
      expect(vin).not.toMatch(/[IOQ]/);
      expect(isValidVin(vin)).toBe(true);
      expect(vin[9]).toBe(modelYearCode(year));
    }
  });

  it('makes shorter chassis numbers before 1981', () => {
    const rng = new Rng('chassis');
    for (const [make, country] of [['Porsche', 'DE'], ['Ferrari', 'IT'], ['Mercedes-Benz', 'DE'], ['Chevrolet', 'US'], ['Ford', 'US'], ['Jaguar', 'GB'], ['Datsun', 'JP'], ['Volvo', 'SE'], ['Lancia', 'IT'], ['Buick', 'US']]) {
      for (let i = 0; i < 200; i++) {
        const chassis = makeChassisNumber(rng, make, country, rng.int(1930, 1980));
        expect(chassis.length).toBeGreaterThanOrEqual(4);
        expect(chassis.length).toBeLessThan(17);
      }
    }
  });
});
