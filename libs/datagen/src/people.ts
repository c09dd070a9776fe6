/**
 * Usernames of sellers and bidders. A platform has a pool of people; person `index` always gets
 * the same name (names are built from the index, so distinct indices almost always differ).
 */
const FIRST = [
  'mike', 'dave', 'john', 'chris', 'steve', 'matt', 'jeff', 'mark', 'paul', 'tom', 'rob', 'dan', 'jim', 'bill', 'greg',
  'scott', 'brian', 'kevin', 'eric', 'tim', 'joe', 'rick', 'gary', 'ken', 'doug', 'andy', 'pete', 'nick', 'tony', 'ryan',
  'jason', 'josh', 'adam', 'ben', 'sam', 'alex', 'will', 'jack', 'luke', 'max', 'sarah', 'kate', 'amy', 'lisa', 'jen',
  'emma', 'anna', 'laura', 'megan', 'rachel', 'claire', 'olivia', 'sophie', 'hans', 'jurgen', 'marco', 'luca', 'pierre',
  'jean', 'henrik', 'lars', 'kenji', 'hiro', 'raj', 'omar', 'carlos', 'diego', 'juan', 'ivan', 'nigel', 'graham', 'ian',
  'colin', 'alistair', 'hamish', 'ollie', 'harry', 'freddie', 'george', 'rupert', 'bruce', 'shane', 'wade', 'clint',
  'dale', 'earl', 'ray', 'frank', 'walt', 'hank', 'lou', 'vince', 'sal', 'gus', 'stan', 'carl', 'phil', 'ted', 'neil',
];
const SECOND = [
  'b', 'k', 'm', 's', 'r', 't', 'w', 'p', 'c', 'd', 'smith', 'jones', 'miller', 'garage', 'motors', 'racing', 'cars',
  'classics', 'drives', 'wrench', 'gearhead', 'shifter', 'torque', 'boxer', 'flat6', 'v8', 'v12', 'turbo', 'rotary',
  'aircooled', 'watercooled', 'vintage', 'petrol', 'octane', 'redline', 'apex', 'heeltoe', 'oversteer', 'clutch',
  'carb', 'weber', 'solex', 'chrome', 'patina', 'barnfind', 'rally', 'track', 'canyon', 'coast', 'desert', 'mountain',
  'valley', 'lake', 'river', 'fox', 'hawk', 'wolf', 'bear', 'eagle', 'falcon', 'stingray', 'cobra', 'viper', 'mustang',
  'bronco', 'scout', 'rover', 'speedster', 'roadster', 'targa', 'gt', 'rs', 'cs', 'ss', 'z28', 'gto', 'tii', 'quattro',
];
const SEPARATORS = ['', '', '', '_', '.', '-'];

const DEALER_PREFIX = [
  'Canyon', 'Roadside', 'Heritage', 'Vintage', 'Classic', 'Legendary', 'Coastal', 'Bay Area', 'Southern', 'Northern',
  'Midwest', 'Pacific', 'Atlantic', 'Gulf Coast', 'Mountain', 'Desert', 'Pinnacle', 'Premier', 'Prestige', 'European',
  'British', 'German', 'Italian', 'Euro', 'Autosport', 'Redline', 'Checkered Flag', 'Grand Prix', 'Paddock', 'Pit Lane',
  'Apex', 'Velocity', 'Ignition', 'Chequered', 'Sterling', 'Sovereign', 'Regal', 'Crown', 'Monarch', 'Summit',
  'Hilltop', 'Lakeside', 'Riverside', 'Harbor', 'Bayside', 'Oak Ridge', 'Cedar', 'Maple', 'Willow', 'Silver State',
];
const DEALER_SUFFIX = [
  'Motorcars', 'Classics', 'Motor Co', 'Autosport', 'Collector Cars', 'Automotive', 'Motors', 'Auto Gallery',
  'Car Company', 'Garage', 'Sports Cars', 'Exotics', 'Restorations', 'Vintage Cars', 'Auto Group', 'Motorsport',
];

/** The username of private person `index` of a pool; `style` in [0, 1) picks the spelling. */
export function personName(index: number, style: number): string {
  const f = FIRST.length;
  const s = SECOND.length;
  const first = FIRST[index % f];
  const second = SECOND[Math.floor(index / f) % s];
  const round = Math.floor(index / (f * s));
  const sep = SEPARATORS[Math.floor(style * SEPARATORS.length)];
  const suffix = round > 0 ? String(round + (style < 0.5 ? 0 : 50)) : style < 0.35 ? String(60 + Math.floor(style * 100)) : '';
  const base = style < 0.2 ? `${capitalize(first)}${capitalize(second)}` : `${first}${sep}${second}`;
  return `${base}${suffix}`;
}

/** The name of dealer `index` of a pool (distinct per index). */
export function dealerName(index: number): string {
  const p = DEALER_PREFIX.length;
  const s = DEALER_SUFFIX.length;
  const name = `${DEALER_PREFIX[index % p]} ${DEALER_SUFFIX[Math.floor(index / p) % s]}`;
  const round = Math.floor(index / (p * s));
  return round > 0 ? `${name} ${round + 1}` : name;
}

function capitalize(word: string): string {
  return word.charAt(0).toUpperCase() + word.slice(1);
}
