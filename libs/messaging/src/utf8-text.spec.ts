import { utf8Text } from './utf8-text';

describe('utf8Text', () => {
  const texts = [
    '',
    'plain ASCII {"a":1}',
    'café',
    '🚗'.repeat(5000),
    `${'x'.repeat(4095)}é${'y'.repeat(5000)}`,
    `${'x'.repeat(4094)}🚗${'y'.repeat(4093)}日本語${'z'.repeat(10)}`,
    Array.from({ length: 3000 }, (_, i) => (i % 97 === 0 ? `Citroën ${i} Škoda Ærø 👨‍👩‍👧 עברית` : `line ${i} \\"quoted\\"`)).join('\n'),
  ];

  it.each(texts.map((text) => [text.length, text]))('decodes %i characters as Buffer#toString does', (_, text) => {
    const bytes = Buffer.from(text as string);
    expect(utf8Text(bytes)).toBe(bytes.toString());
  });

  it('decodes a character cut at every possible block boundary', () => {
    for (let pad = 4090; pad <= 4100; pad += 1) {
      const bytes = Buffer.from(`${'a'.repeat(pad)}€🚗é${'b'.repeat(9000)}`);
      expect(utf8Text(bytes)).toBe(bytes.toString());
    }
  });

  it('decodes invalid UTF-8 as Buffer#toString does', () => {
    const bytes = Buffer.concat([Buffer.alloc(5000, 0x61), Buffer.from([0xff, 0xc3]), Buffer.alloc(5000, 0x62), Buffer.from([0xe2, 0x82])]);
    expect(utf8Text(bytes)).toBe(bytes.toString());
  });
});
