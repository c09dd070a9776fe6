import { GENERIC_EXTERIOR_COLORS, INTERIOR_COLORS, MAKE_EXTERIOR_COLORS, STANDARD_COLORS, standardColorName } from './colors';

describe('colors', () => {
  it('maps every shipped colour name to a standard colour', () => {
    for (const palette of [GENERIC_EXTERIOR_COLORS, INTERIOR_COLORS, ...Object.values(MAKE_EXTERIOR_COLORS)]) {
      for (const color of palette) {
        expect(STANDARD_COLORS).toContain(color.standard);
        expect(standardColorName(color.name)).toBe(color.standard);
      }
    }
  });

  it('reads manufacturer names and falls back to keywords', () => {
    expect(standardColorName('Guards Red')).toBe('Red');
    expect(standardColorName('rosso corsa')).toBe('Red');
    expect(standardColorName('Nardo Grey')).toBe('Gray');
    expect(standardColorName('Midnight Blue Pearl')).toBe('Blue');
    expect(standardColorName('Verde Ithaca')).toBe('Green');
    expect(standardColorName('Cognac')).toBe('Tan');
    expect(standardColorName('Unobtainium')).toBeNull();
    expect(standardColorName('')).toBeNull();
    expect(standardColorName(null)).toBeNull();
  });
});
