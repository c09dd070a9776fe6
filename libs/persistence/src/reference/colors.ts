/**
 * Colour names as sources write them (manufacturer paint and trim names) and the standard colour
 * each one belongs to: `standard_exterior_color` / `standard_interior_color` of the REST Auction
 * come from `standardColorName()`.
 */

export const STANDARD_COLORS = [
  'Black',
  'White',
  'Silver',
  'Gray',
  'Red',
  'Blue',
  'Green',
  'Yellow',
  'Orange',
  'Brown',
  'Tan',
  'Beige',
  'Gold',
  'Purple',
] as const;
export type StandardColor = (typeof STANDARD_COLORS)[number];

export interface ColorName {
  readonly name: string;
  readonly standard: StandardColor;
}

type Pair = readonly [string, StandardColor];
const pairs = (list: readonly Pair[]): readonly ColorName[] => list.map(([name, standard]) => ({ name, standard }));

/** Exterior paint names any make may use. */
export const GENERIC_EXTERIOR_COLORS: readonly ColorName[] = pairs([
  ['Black', 'Black'],
  ['White', 'White'],
  ['Silver', 'Silver'],
  ['Silver Metallic', 'Silver'],
  ['Red', 'Red'],
  ['Dark Blue', 'Blue'],
  ['Blue Metallic', 'Blue'],
  ['Light Blue', 'Blue'],
  ['Dark Green', 'Green'],
  ['Green Metallic', 'Green'],
  ['Gray Metallic', 'Gray'],
  ['Charcoal', 'Gray'],
  ['Yellow', 'Yellow'],
  ['Orange', 'Orange'],
  ['Brown Metallic', 'Brown'],
  ['Beige', 'Beige'],
  ['Champagne', 'Gold'],
  ['Gold Metallic', 'Gold'],
  ['Burgundy', 'Red'],
  ['Maroon', 'Red'],
  ['Cream', 'Beige'],
  ['Ivory', 'White'],
  ['Purple', 'Purple'],
  ['Two-Tone Blue and White', 'Blue'],
  ['Primer Gray', 'Gray'],
]);

/** Exterior paint names specific to a make (canonical make name → palette). */
export const MAKE_EXTERIOR_COLORS: Readonly<Record<string, readonly ColorName[]>> = {
  Porsche: pairs([
    ['Guards Red', 'Red'],
    ['Grand Prix White', 'White'],
    ['Arctic Silver Metallic', 'Silver'],
    ['GT Silver Metallic', 'Silver'],
    ['Slate Grey', 'Gray'],
    ['Irish Green', 'Green'],
    ['Signal Orange', 'Orange'],
    ['Mexico Blue', 'Blue'],
    ['Riviera Blue', 'Blue'],
    ['Midnight Blue Metallic', 'Blue'],
    ['Speed Yellow', 'Yellow'],
    ['Racing Yellow', 'Yellow'],
    ['Black', 'Black'],
    ['Chalk', 'Gray'],
    ['Miami Blue', 'Blue'],
    ['Lava Orange', 'Orange'],
    ['Polar Silver Metallic', 'Silver'],
    ['Oak Green Metallic', 'Green'],
    ['Ruby Star', 'Red'],
    ['Bahama Yellow', 'Yellow'],
    ['Slate Gray', 'Gray'],
    ['Python Green', 'Green'],
  ]),
  Ferrari: pairs([
    ['Rosso Corsa', 'Red'],
    ['Rosso Scuderia', 'Red'],
    ['Giallo Modena', 'Yellow'],
    ['Nero', 'Black'],
    ['Nero Daytona', 'Black'],
    ['Argento Nurburgring', 'Silver'],
    ['Grigio Titanio', 'Gray'],
    ['Grigio Silverstone', 'Gray'],
    ['Blu Tour de France', 'Blue'],
    ['Blu Pozzi', 'Blue'],
    ['Bianco Avus', 'White'],
    ['Verde British', 'Green'],
    ['Rosso Fiorano', 'Red'],
    ['Rosso Mugello', 'Red'],
  ]),
  Lamborghini: pairs([
    ['Giallo Orion', 'Yellow'],
    ['Verde Mantis', 'Green'],
    ['Arancio Borealis', 'Orange'],
    ['Bianco Monocerus', 'White'],
    ['Nero Aldebaran', 'Black'],
    ['Grigio Telesto', 'Gray'],
    ['Blu Le Mans', 'Blue'],
    ['Viola Parsifae', 'Purple'],
    ['Rosso Mars', 'Red'],
  ]),
  BMW: pairs([
    ['Alpine White', 'White'],
    ['Jet Black', 'Black'],
    ['Estoril Blue', 'Blue'],
    ['Laguna Seca Blue', 'Blue'],
    ['Imola Red', 'Red'],
    ['Hellrot', 'Red'],
    ['Dakar Yellow', 'Yellow'],
    ['Interlagos Blue', 'Blue'],
    ['Phoenix Yellow', 'Yellow'],
    ['Titanium Silver', 'Silver'],
    ['Brilliantrot', 'Red'],
    ['Fjord Blue', 'Blue'],
    ['Inka Orange', 'Orange'],
    ['Sahara Beige', 'Beige'],
    ['Isle of Man Green', 'Green'],
    ['Frozen Black', 'Black'],
  ]),
  'Mercedes-Benz': pairs([
    ['Astral Silver', 'Silver'],
    ['Signal Red', 'Red'],
    ['Classic White', 'White'],
    ['Black', 'Black'],
    ['Smoke Silver', 'Silver'],
    ['Anthracite Grey', 'Gray'],
    ['Midnight Blue', 'Blue'],
    ['Thistle Green', 'Green'],
    ['Ivory', 'White'],
    ['Papyrus White', 'White'],
    ['Obsidian Black', 'Black'],
    ['Designo Magno Grey', 'Gray'],
    ['Tobacco Brown', 'Brown'],
  ]),
  Chevrolet: pairs([
    ['Hugger Orange', 'Orange'],
    ['Marina Blue', 'Blue'],
    ['Tuxedo Black', 'Black'],
    ['Ermine White', 'White'],
    ['Rally Green', 'Green'],
    ['Daytona Yellow', 'Yellow'],
    ['Cranberry Red', 'Red'],
    ['Nassau Blue', 'Blue'],
    ['Milano Maroon', 'Red'],
    ['Torch Red', 'Red'],
    ['Arctic White', 'White'],
    ['Bright Red', 'Red'],
    ['Riverside Red', 'Red'],
    ['Fathom Green', 'Green'],
  ]),
  Ford: pairs([
    ['Grabber Blue', 'Blue'],
    ['Wimbledon White', 'White'],
    ['Candyapple Red', 'Red'],
    ['Highland Green', 'Green'],
    ['Acapulco Blue', 'Blue'],
    ['Raven Black', 'Black'],
    ['Calypso Coral', 'Orange'],
    ['Poppy Red', 'Red'],
    ['Oxford White', 'White'],
    ['Race Red', 'Red'],
    ['Velocity Blue', 'Blue'],
    ['Cyber Orange', 'Orange'],
    ['Grabber Orange', 'Orange'],
  ]),
  Dodge: pairs([
    ['Plum Crazy', 'Purple'],
    ['Hemi Orange', 'Orange'],
    ['Sublime', 'Green'],
    ['B5 Blue', 'Blue'],
    ['Go Mango', 'Orange'],
    ['TorRed', 'Red'],
    ['Top Banana', 'Yellow'],
    ['Viper Red', 'Red'],
  ]),
  Plymouth: pairs([
    ['In-Violet', 'Purple'],
    ['Vitamin C Orange', 'Orange'],
    ['Lemon Twist', 'Yellow'],
    ['Limelight', 'Green'],
    ['Rallye Red', 'Red'],
  ]),
  Jaguar: pairs([
    ['British Racing Green', 'Green'],
    ['Opalescent Silver Blue', 'Blue'],
    ['Old English White', 'White'],
    ['Signal Red', 'Red'],
    ['Primrose Yellow', 'Yellow'],
    ['Carmen Red', 'Red'],
    ['Sable', 'Brown'],
  ]),
  'Aston Martin': pairs([
    ['Silver Birch', 'Silver'],
    ['Tungsten Silver', 'Silver'],
    ['Racing Green', 'Green'],
    ['Onyx Black', 'Black'],
    ['Skyfall Silver', 'Silver'],
    ['Morning Frost White', 'White'],
  ]),
  Toyota: pairs([
    ['Super White', 'White'],
    ['Freedom Red', 'Red'],
    ['Renaissance Red', 'Red'],
    ['Beige', 'Beige'],
    ['Sky Blue', 'Blue'],
    ['Olive Drab', 'Green'],
    ['Cement', 'Gray'],
    ['Black Sand Pearl', 'Black'],
    ['Lava Orange', 'Orange'],
  ]),
  Mazda: pairs([
    ['Classic Red', 'Red'],
    ['Mariner Blue', 'Blue'],
    ['Montego Blue', 'Blue'],
    ['British Racing Green', 'Green'],
    ['Soul Red Crystal', 'Red'],
    ['Competition Yellow', 'Yellow'],
    ['Vintage Red', 'Red'],
  ]),
  Honda: pairs([
    ['Championship White', 'White'],
    ['New Formula Red', 'Red'],
    ['Berlina Black', 'Black'],
    ['Grand Prix White', 'White'],
    ['Rio Yellow Pearl', 'Yellow'],
    ['Laguna Blue Pearl', 'Blue'],
  ]),
  Nissan: pairs([
    ['Bayside Blue', 'Blue'],
    ['Millennium Jade', 'Green'],
    ['Midnight Purple', 'Purple'],
    ['Gun Grey Metallic', 'Gray'],
    ['Super Red', 'Red'],
    ['Crystal White', 'White'],
  ]),
  Datsun: pairs([
    ['Safari Gold', 'Gold'],
    ['Racing Orange', 'Orange'],
    ['Sunset Orange', 'Orange'],
    ['Racing Green', 'Green'],
    ['Silver Metallic', 'Silver'],
  ]),
  Volkswagen: pairs([
    ['L90D Pearl White', 'White'],
    ['Sea Blue', 'Blue'],
    ['Lotus White', 'White'],
    ['Tornado Red', 'Red'],
    ['Ruby Red', 'Red'],
    ['Savannah Beige', 'Beige'],
    ['Sealing Wax Red', 'Red'],
    ['Velvet Green', 'Green'],
  ]),
  'Land Rover': pairs([
    ['Coniston Green', 'Green'],
    ['Alpine White', 'White'],
    ['Keswick Green', 'Green'],
    ['Bronze Green', 'Green'],
    ['Arles Blue', 'Blue'],
    ['Santorini Black', 'Black'],
    ['Fuji White', 'White'],
    ['Limestone', 'Beige'],
  ]),
  'Alfa Romeo': pairs([
    ['Alfa Red', 'Red'],
    ['Rosso Alfa', 'Red'],
    ['Biancospino', 'White'],
    ['Verde Pino', 'Green'],
    ['Giallo Ocra', 'Yellow'],
    ['Blu Olandese', 'Blue'],
  ]),
};

/** Interior trim names. */
export const INTERIOR_COLORS: readonly ColorName[] = pairs([
  ['Black Leather', 'Black'],
  ['Black Vinyl', 'Black'],
  ['Black', 'Black'],
  ['Tan Leather', 'Tan'],
  ['Cognac Leather', 'Brown'],
  ['Saddle Leather', 'Brown'],
  ['Brown Leather', 'Brown'],
  ['Red Leather', 'Red'],
  ['Oxblood Leather', 'Red'],
  ['Parchment', 'Beige'],
  ['Beige Cloth', 'Beige'],
  ['Biscuit Leather', 'Beige'],
  ['Magnolia Leather', 'White'],
  ['Gray Cloth', 'Gray'],
  ['Gray Leather', 'Gray'],
  ['Blue Leather', 'Blue'],
  ['Navy Vinyl', 'Blue'],
  ['Green Leather', 'Green'],
  ['Houndstooth', 'Black'],
  ['Tartan Plaid', 'Red'],
  ['Crema Leather', 'Beige'],
  ['Cuoio Leather', 'Tan'],
  ['Pasha Cloth', 'Black'],
  ['Burgundy Leather', 'Red'],
  ['White Vinyl', 'White'],
  ['Camel Leather', 'Tan'],
]);

const COLOR_INDEX = new Map<string, StandardColor>();
for (const palette of [GENERIC_EXTERIOR_COLORS, INTERIOR_COLORS, ...Object.values(MAKE_EXTERIOR_COLORS)]) {
  for (const c of palette) {
    const key = c.name.toLowerCase();
    if (!COLOR_INDEX.has(key)) COLOR_INDEX.set(key, c.standard);
  }
}

/** Keyword fallbacks, first match wins (order matters: "silver blue" is blue, "rosso" is red). */
const KEYWORDS: readonly (readonly [RegExp, StandardColor])[] = [
  [/\b(blue|blu|bleu|azzurro|navy)\b/, 'Blue'],
  [/\b(red|rosso|rouge|rot|maroon|burgundy|bordeaux|oxblood|cranberry|crimson|wine)\b/, 'Red'],
  [/\b(green|verde|vert|grun|grün|olive|jade)\b/, 'Green'],
  [/\b(yellow|giallo|jaune|gelb|lemon)\b/, 'Yellow'],
  [/\b(orange|arancio|tangerine|copper)\b/, 'Orange'],
  [/\b(purple|violet|viola|plum|aubergine)\b/, 'Purple'],
  [/\b(gold|champagne|bronze)\b/, 'Gold'],
  [/\b(silver|argento|platinum)\b/, 'Silver'],
  [/\b(gray|grey|grigio|anthracite|graphite|charcoal|gunmetal|slate)\b/, 'Gray'],
  [/\b(white|bianco|blanc|weiss|ivory|pearl)\b/, 'White'],
  [/\b(black|nero|noir|schwarz|ebony|onyx|obsidian)\b/, 'Black'],
  [/\b(tan|camel|cuoio|cognac)\b/, 'Tan'],
  [/\b(brown|marrone|chocolate|mocha|saddle|tobacco)\b/, 'Brown'],
  [/\b(beige|cream|parchment|sand|biscuit|magnolia|crema|stone)\b/, 'Beige'],
];

/** The standard colour of a source colour name, or null when it cannot be told. */
export function standardColorName(raw: string | null | undefined): StandardColor | null {
  if (raw == null) return null;
  const key = raw.trim().toLowerCase();
  if (key === '') return null;
  const known = COLOR_INDEX.get(key);
  if (known) return known;
  for (const [pattern, standard] of KEYWORDS) if (pattern.test(key)) return standard;
  return null;
}
