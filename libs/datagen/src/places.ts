/**
 * Seller locations. A zip template uses '#' for a digit and '@' for a letter.
 */
export type Region = 'US' | 'CA' | 'GB' | 'EU' | 'AU';

export interface Place {
  readonly city: string;
  readonly state: string | null;
  readonly zip: string;
  readonly country: string;
  /** Relative weight within its region. */
  readonly weight: number;
}

type Row = readonly [city: string, state: string | null, zip: string, country: string, weight?: number];
const rows = (list: readonly Row[]): readonly Place[] =>
  list.map(([city, state, zip, country, weight]) => ({ city, state, zip, country, weight: weight ?? 1 }));

export const PLACES: Readonly<Record<Region, readonly Place[]>> = {
  US: rows([
    ['Los Angeles', 'CA', '900##', 'US', 6], ['San Diego', 'CA', '921##', 'US', 3], ['San Francisco', 'CA', '941##', 'US', 2],
    ['San Jose', 'CA', '951##', 'US', 2], ['Sacramento', 'CA', '958##', 'US', 1.5], ['Newport Beach', 'CA', '926##', 'US', 2.5],
    ['Santa Barbara', 'CA', '931##', 'US', 1], ['Scottsdale', 'AZ', '852##', 'US', 3], ['Phoenix', 'AZ', '850##', 'US', 2],
    ['Tucson', 'AZ', '857##', 'US', 1], ['Las Vegas', 'NV', '891##', 'US', 1.5], ['Reno', 'NV', '895##', 'US', 0.7],
    ['Denver', 'CO', '802##', 'US', 2], ['Boulder', 'CO', '803##', 'US', 0.8], ['Salt Lake City', 'UT', '841##', 'US', 1.2],
    ['Boise', 'ID', '837##', 'US', 0.8], ['Portland', 'OR', '972##', 'US', 1.5], ['Bend', 'OR', '977##', 'US', 0.6],
    ['Seattle', 'WA', '981##', 'US', 2], ['Spokane', 'WA', '992##', 'US', 0.6], ['Austin', 'TX', '787##', 'US', 2],
    ['Dallas', 'TX', '752##', 'US', 3], ['Houston', 'TX', '770##', 'US', 3], ['San Antonio', 'TX', '782##', 'US', 1.5],
    ['Fort Worth', 'TX', '761##', 'US', 1], ['Oklahoma City', 'OK', '731##', 'US', 0.8], ['Tulsa', 'OK', '741##', 'US', 0.6],
    ['Kansas City', 'MO', '641##', 'US', 1], ['St. Louis', 'MO', '631##', 'US', 1.2], ['Omaha', 'NE', '681##', 'US', 0.6],
    ['Minneapolis', 'MN', '554##', 'US', 1.2], ['Chicago', 'IL', '606##', 'US', 3], ['Naperville', 'IL', '605##', 'US', 1],
    ['Milwaukee', 'WI', '532##', 'US', 0.8], ['Detroit', 'MI', '482##', 'US', 1.5], ['Grand Rapids', 'MI', '495##', 'US', 0.7],
    ['Indianapolis', 'IN', '462##', 'US', 1], ['Columbus', 'OH', '432##', 'US', 1], ['Cleveland', 'OH', '441##', 'US', 0.9],
    ['Cincinnati', 'OH', '452##', 'US', 0.8], ['Pittsburgh', 'PA', '152##', 'US', 0.9], ['Philadelphia', 'PA', '191##', 'US', 1.3],
    ['Lancaster', 'PA', '176##', 'US', 0.6], ['New York', 'NY', '100##', 'US', 2.5], ['Huntington', 'NY', '117##', 'US', 1],
    ['Buffalo', 'NY', '142##', 'US', 0.6], ['Greenwich', 'CT', '068##', 'US', 1.2], ['Boston', 'MA', '021##', 'US', 1.8],
    ['Portland', 'ME', '041##', 'US', 0.5], ['Burlington', 'VT', '054##', 'US', 0.3], ['Manchester', 'NH', '031##', 'US', 0.5],
    ['Providence', 'RI', '029##', 'US', 0.4], ['Newark', 'NJ', '071##', 'US', 1], ['Princeton', 'NJ', '085##', 'US', 0.8],
    ['Baltimore', 'MD', '212##', 'US', 1], ['Washington', 'DC', '200##', 'US', 1], ['Richmond', 'VA', '232##', 'US', 0.9],
    ['Charlotte', 'NC', '282##', 'US', 1.3], ['Raleigh', 'NC', '276##', 'US', 1], ['Atlanta', 'GA', '303##', 'US', 2],
    ['Savannah', 'GA', '314##', 'US', 0.5], ['Nashville', 'TN', '372##', 'US', 1.2], ['Knoxville', 'TN', '379##', 'US', 0.6],
    ['Birmingham', 'AL', '352##', 'US', 0.6], ['New Orleans', 'LA', '701##', 'US', 0.6], ['Miami', 'FL', '331##', 'US', 2.5],
    ['Fort Lauderdale', 'FL', '333##', 'US', 1.5], ['Naples', 'FL', '341##', 'US', 1.2], ['Tampa', 'FL', '336##', 'US', 1.5],
    ['Orlando', 'FL', '328##', 'US', 1.3], ['Jacksonville', 'FL', '322##', 'US', 0.9], ['Charleston', 'SC', '294##', 'US', 0.7],
    ['Louisville', 'KY', '402##', 'US', 0.6], ['Little Rock', 'AR', '722##', 'US', 0.4], ['Albuquerque', 'NM', '871##', 'US', 0.5],
    ['Santa Fe', 'NM', '875##', 'US', 0.3], ['Honolulu', 'HI', '968##', 'US', 0.4], ['Anchorage', 'AK', '995##', 'US', 0.2],
    ['Bozeman', 'MT', '597##', 'US', 0.4], ['Jackson', 'WY', '830##', 'US', 0.3], ['Sioux Falls', 'SD', '571##', 'US', 0.2],
    ['Des Moines', 'IA', '503##', 'US', 0.4], ['Fargo', 'ND', '581##', 'US', 0.2],
  ]),
  CA: rows([
    ['Toronto', 'ON', 'M5V #@#', 'CA', 3], ['Vancouver', 'BC', 'V6B #@#', 'CA', 2], ['Montreal', 'QC', 'H3B #@#', 'CA', 1.5],
    ['Calgary', 'AB', 'T2P #@#', 'CA', 1.2], ['Ottawa', 'ON', 'K1P #@#', 'CA', 0.8],
  ]),
  GB: rows([
    ['London', 'Greater London', 'SW# #@@', 'GB', 5], ['Guildford', 'Surrey', 'GU# #@@', 'GB', 2], ['Oxford', 'Oxfordshire', 'OX# #@@', 'GB', 1.2],
    ['Cambridge', 'Cambridgeshire', 'CB# #@@', 'GB', 1], ['Bristol', 'Bristol', 'BS# #@@', 'GB', 1.2], ['Bath', 'Somerset', 'BA# #@@', 'GB', 0.8],
    ['Manchester', 'Greater Manchester', 'M# #@@', 'GB', 1.5], ['Leeds', 'West Yorkshire', 'LS# #@@', 'GB', 1.2], ['York', 'North Yorkshire', 'YO# #@@', 'GB', 0.6],
    ['Birmingham', 'West Midlands', 'B# #@@', 'GB', 1.3], ['Coventry', 'West Midlands', 'CV# #@@', 'GB', 0.8], ['Edinburgh', 'Midlothian', 'EH# #@@', 'GB', 1],
    ['Glasgow', 'Lanarkshire', 'G# #@@', 'GB', 0.9], ['Cardiff', 'South Glamorgan', 'CF## #@@', 'GB', 0.7], ['Norwich', 'Norfolk', 'NR# #@@', 'GB', 0.6],
    ['Brighton', 'East Sussex', 'BN# #@@', 'GB', 0.8], ['Cheltenham', 'Gloucestershire', 'GL5# #@@', 'GB', 0.7], ['Exeter', 'Devon', 'EX# #@@', 'GB', 0.6],
    ['Harrogate', 'North Yorkshire', 'HG# #@@', 'GB', 0.5], ['Newcastle upon Tyne', 'Tyne and Wear', 'NE# #@@', 'GB', 0.7], ['Belfast', 'County Antrim', 'BT# #@@', 'GB', 0.4],
    ['Chester', 'Cheshire', 'CH# #@@', 'GB', 0.6], ['Winchester', 'Hampshire', 'SO2# #@@', 'GB', 0.6], ['Reading', 'Berkshire', 'RG# #@@', 'GB', 0.8],
    ['Northampton', 'Northamptonshire', 'NN# #@@', 'GB', 0.5], ['Goodwood', 'West Sussex', 'PO18 #@@', 'GB', 0.3],
  ]),
  EU: rows([
    ['Munich', 'Bavaria', '803##', 'DE', 2], ['Stuttgart', 'Baden-Württemberg', '701##', 'DE', 1.8], ['Berlin', 'Berlin', '101##', 'DE', 1.2],
    ['Hamburg', 'Hamburg', '200##', 'DE', 1.2], ['Düsseldorf', 'North Rhine-Westphalia', '402##', 'DE', 1], ['Frankfurt', 'Hesse', '603##', 'DE', 1],
    ['Amsterdam', 'North Holland', '10## @@', 'NL', 1.5], ['Rotterdam', 'South Holland', '30## @@', 'NL', 0.8], ['Utrecht', 'Utrecht', '35## @@', 'NL', 0.6],
    ['Brussels', 'Brussels-Capital', '10#0', 'BE', 1], ['Antwerp', 'Antwerp', '20#0', 'BE', 0.6], ['Paris', 'Île-de-France', '750##', 'FR', 1.8],
    ['Lyon', 'Auvergne-Rhône-Alpes', '6900#', 'FR', 0.6], ['Nice', "Provence-Alpes-Côte d'Azur", '0600#', 'FR', 0.6], ['Milan', 'Lombardy', '201##', 'IT', 1.5],
    ['Modena', 'Emilia-Romagna', '4112#', 'IT', 0.7], ['Turin', 'Piedmont', '101##', 'IT', 0.7], ['Rome', 'Lazio', '001##', 'IT', 0.7],
    ['Madrid', 'Community of Madrid', '280##', 'ES', 0.8], ['Barcelona', 'Catalonia', '080##', 'ES', 0.7], ['Dublin', 'Leinster', 'D0# @##@', 'IE', 0.8],
    ['Vienna', 'Vienna', '1#10', 'AT', 0.7], ['Lisbon', 'Lisbon', '1###-###', 'PT', 0.4], ['Monaco', null, '98000', 'MC', 0.4],
    ['Luxembourg', null, 'L-1###', 'LU', 0.3],
  ]),
  AU: rows([
    ['Sydney', 'NSW', '20##', 'AU', 3], ['Melbourne', 'VIC', '30##', 'AU', 3], ['Brisbane', 'QLD', '40##', 'AU', 1.5],
    ['Perth', 'WA', '60##', 'AU', 1.2], ['Adelaide', 'SA', '50##', 'AU', 1], ['Gold Coast', 'QLD', '42##', 'AU', 0.8],
    ['Canberra', 'ACT', '26##', 'AU', 0.5], ['Hobart', 'TAS', '70##', 'AU', 0.3],
  ]),
};

const ZIP_LETTERS = 'ABDEFGHJLNPQRSTUWXYZ';

/** Fills a zip template; `unit(k)` gives the k-th pseudo-random value in [0, 1). */
export function fillZip(template: string, unit: (k: number) => number): string {
  let out = '';
  let k = 0;
  for (const ch of template) {
    if (ch === '#') out += String(Math.floor(unit(k++) * 10));
    else if (ch === '@') out += ZIP_LETTERS[Math.floor(unit(k++) * ZIP_LETTERS.length)];
    else out += ch;
  }
  return out;
}
