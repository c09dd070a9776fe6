/**
 * Listing text: titles, descriptions and the detail arrays, built from the facts of one car so the
 * words agree with the data (a "project" has rust, a restored car may be "matching numbers", a
 * manual car says "manual", a turbo says "turbocharged").
 */
import type { Rng } from './prng';

export type Condition = 'concours' | 'excellent' | 'good' | 'driver' | 'project';

export interface CarFacts {
  year: number;
  make: string;
  model: string;
  listingMake: string;
  listingModel: string;
  kind: 'car' | 'motorcycle';
  bodyStyle: string | null;
  engine: string | null;
  transmission: string | null;
  drivetrain: string | null;
  exteriorColor: string | null;
  interiorColor: string | null;
  mileage: number | null;
  mileageUnit: 'mi' | 'km';
  vin: string | null;
  condition: Condition;
  country: string;
  state: string | null;
  titleStatus: string | null;
  hasReserve: boolean;
  endYear: number;
  endMonth: number;
  sellerType: 'private' | 'dealer';
}

export interface ListingText {
  description: string;
  ownershipHistory: string | null;
  modifications: string[];
  knownFlaws: string[];
  recentServiceHistory: string[];
  listingDetails: string[];
}

const MONTHS = [
  'January', 'February', 'March', 'April', 'May', 'June',
  'July', 'August', 'September', 'October', 'November', 'December',
];

function fmtInt(n: number): string {
  return n.toLocaleString('en-US');
}

export function mileageShort(mileage: number): string {
  return mileage >= 1000 ? `${Math.round(mileage / 1000)}k` : String(mileage);
}

function pickSome(rng: Rng, pool: readonly string[], count: number): string[] {
  const out: string[] = [];
  const used = new Set<number>();
  const n = Math.min(count, pool.length);
  while (out.length < n) {
    const i = Math.floor(rng.next() * pool.length);
    if (used.has(i)) continue;
    used.add(i);
    out.push(pool[i]);
  }
  return out;
}

function monthsBefore(endYear: number, endMonth: number, back: number): string {
  const index = endYear * 12 + (endMonth - 1) - back;
  return `${MONTHS[index % 12]} ${Math.floor(index / 12)}`;
}

const CAR_MODS = [
  'Aftermarket exhaust system', 'Coilover suspension', 'Upgraded stereo with Bluetooth', 'LED headlights',
  'Aftermarket wheels', 'Bolt-in roll bar', 'Short-throw shifter',
  'Upgraded radiator and electric fan', 'Aftermarket air conditioning', 'Performance chip tune',
  'Lowered suspension', 'Big-brake kit', 'Stainless steel brake lines',
  'Aftermarket steering wheel', 'Upgraded alternator', 'Front strut-tower brace', 'Window tint',
  'Aftermarket intake',
];
const CLASSIC_MODS = ['Modern radial tires', 'Disc brake conversion', 'Power steering conversion', 'Electronic ignition conversion', 'Period-correct Weber carburetors'];
const TRUCK_MODS = ['Lift kit', 'Winch', 'Aftermarket bumpers', 'Off-road tires', 'Roof rack', 'Skid plates', 'Locking hubs'];
const MOTO_MODS = ['Aftermarket exhaust', 'Rear sets', 'Clip-on handlebars', 'Upgraded suspension', 'LED lighting', 'Solo seat'];

const FLAWS_MINOR = [
  'Stone chips on the front bumper', 'Scratches on the rear bumper', 'Small dent on the passenger door',
  'Worn driver\'s seat bolster', 'Cracked dashboard', 'Inoperative clock', 'Faded trim', 'Curb rash on the wheels',
  'Paint touch-ups on the hood', 'Sagging headliner', 'Inoperative air conditioning', 'Pitted brightwork',
  'Oil seep from the valve covers', 'Crazing in the paint', 'Worn carpets', 'Chipped windshield',
];
const FLAWS_RUST = [
  'Rust in the floors', 'Rust in the rocker panels', 'Surface rust on the undercarriage',
  'Rust bubbling around the wheel arches', 'Rust in the trunk floor', 'Rust in the battery tray',
];
const FLAWS_PROJECT = [
  'Engine does not run', 'Missing interior trim', 'Non-functional brakes', 'Seized engine', 'Torn seats',
  'Missing title', 'Cracked windshield', 'Leaking fuel tank', 'Electrical gremlins',
];

const SERVICE = [
  'Oil and filter change', 'New tires', 'Timing belt and water pump replaced', 'Brake fluid flush',
  'Major service including valve adjustment', 'New battery', 'Clutch replaced', 'Carburetors rebuilt',
  'Brake pads and rotors replaced', 'Coolant flush', 'Spark plugs and wires replaced', 'Fuel pump replaced',
  'Transmission fluid changed', 'Suspension bushings replaced', 'Air-conditioning recharged', 'Alignment',
];
const MOTO_SERVICE = ['Oil and filter change', 'New tires', 'Chain and sprockets replaced', 'Carburetors cleaned and synced', 'Valve adjustment', 'New battery'];

const EQUIPMENT = [
  'Limited-Slip Differential', 'Air Conditioning', 'Power Windows', 'Sport Seats', 'Sunroof', 'Cruise Control',
  'Heated Seats', 'Fog Lights', 'Tool Kit', 'Spare Tire', 'Owner\'s Manuals', 'Two Keys', 'Window Sticker',
  'Service Records', 'Books and Records', 'Car Cover', 'Tonneau Cover', 'Hardtop', 'Soft Top', 'Factory Radio',
];

const RESTORATION = ['a rotisserie restoration', 'a nut-and-bolt restoration', 'a comprehensive restoration', 'a frame-off restoration', 'a bare-metal respray and mechanical refresh'];
const SHOWS = ['Pebble Beach', 'Amelia Island', 'the Goodwood Festival of Speed', 'local concours events', 'regional club shows', 'Hershey'];

/** Description and detail arrays of a listing. */
export function listingText(rng: Rng, f: CarFacts): ListingText {
  const unitWord = f.mileageUnit === 'km' ? 'kilometers' : 'miles';
  const parts: string[] = [];
  const noun = f.kind === 'motorcycle' ? 'motorcycle' : f.bodyStyle === 'Pickup' ? 'truck' : 'car';
  const clauses: string[] = [];
  if (f.exteriorColor) clauses.push(`is finished in ${f.exteriorColor}${f.interiorColor ? ` over ${f.interiorColor}` : ''}`);
  if (f.engine) clauses.push(`is powered by a ${f.engine}${f.transmission ? ` paired with a ${f.transmission.toLowerCase()} transmission` : ''}`);
  parts.push(`This ${f.year} ${f.make} ${f.model} ${clauses.length > 0 ? clauses.join(' and ') : `is offered by a ${f.sellerType}`}.`);

  const restorationYear = Math.max(f.year + 5, f.endYear - 1 - Math.floor(rng.next() * 12));
  const preEmissions = f.year < 1981;
  switch (f.condition) {
    case 'concours':
      if (restorationYear < f.endYear) parts.push(`The car benefited from ${rng.pick(RESTORATION)} completed in ${restorationYear} and has since been shown at ${rng.pick(SHOWS)}.`);
      else parts.push(`It is a concours-quality, highly original example that has been shown at ${rng.pick(SHOWS)}.`);
      if (preEmissions && rng.chance(0.8)) parts.push('It is described as matching numbers, retaining its original engine and transmission.');
      break;
    case 'excellent':
      parts.push(rng.chance(0.5) ? 'It is said to retain much of its original paint, and the seller reports no rust.' : 'The car was restored in the past and has been carefully maintained since, with no rust reported.');
      if (preEmissions && rng.chance(0.45)) parts.push('The engine is numbers-matching, and the car is described as matching numbers per its documentation.');
      break;
    case 'good':
      parts.push('The exterior shows minor chips and scratches consistent with age and use, and the interior is in good condition.');
      if (preEmissions && rng.chance(0.2)) parts.push('The seller states the car is matching numbers.');
      break;
    case 'driver':
      parts.push(f.year < 2000 ? 'It is presented as a driver-quality example with patina throughout, and surface rust is visible on the undercarriage.' : `It is presented as a well-used ${noun} with wear consistent with its age and mileage.`);
      break;
    case 'project':
      parts.push(rng.chance(0.5) ? `This project ${noun} has rust ${f.kind === 'motorcycle' ? 'on the frame and tank' : 'in the floors and rocker panels'} and will need a full restoration.` : `Offered as a project, the ${noun} does not currently run and shows rust and missing trim.`);
      break;
  }

  if (f.transmission && /manual/i.test(f.transmission)) parts.push(`Power is sent through a ${f.transmission.toLowerCase()} gearbox${f.drivetrain && f.drivetrain !== 'RWD' ? ` with ${f.drivetrain === 'FWD' ? 'front-wheel' : f.drivetrain === 'AWD' ? 'all-wheel' : 'four-wheel'} drive` : ''}, making this a true manual ${noun}.`);
  else if (f.transmission && /automatic|pdk|dual-clutch|tiptronic/i.test(f.transmission)) parts.push(`The ${f.transmission.toLowerCase()} makes it an easy ${noun} to drive daily.`);
  if (f.engine && /turbo/i.test(f.engine)) parts.push(`The turbocharged engine ${rng.chance(0.5) ? 'pulls strongly, and the turbo spools cleanly' : 'has been serviced by a specialist'}.`);
  if (f.engine && /supercharged/i.test(f.engine)) parts.push('The supercharged engine delivers instant torque.');

  if (f.mileage == null) parts.push('True mileage is unknown (TMU).');
  else {
    const owned = Math.max(0, Math.round(f.mileage * rng.range(0.02, 0.4)));
    parts.push(`The odometer shows ${fmtInt(f.mileage)} ${unitWord}${owned >= 100 ? `, approximately ${fmtInt(owned)} of which were added by the current owner` : ''}.`);
  }
  if (f.country === 'US' && f.year >= 1981 && f.kind === 'car' && rng.chance(0.4)) parts.push('A clean Carfax report is included.');
  if (f.country === 'GB' && rng.chance(0.4)) parts.push(`The car is ${rng.chance(0.7) ? 'right-hand drive' : 'a left-hand-drive import'} and comes with a current MOT and V5C.`);
  if (f.country === 'AU' && rng.chance(0.3)) parts.push('It is registered in Australia and is right-hand drive.');
  if (rng.chance(0.45)) parts.push(`The sale includes ${pickSome(rng, ['service records', 'the owner\'s manuals', 'a spare key', 'a tool kit', 'a car cover', 'a Certificate of Authenticity', 'window sticker copies', 'restoration photos'], 2).join(' and ')}.`);
  if (f.titleStatus && f.country === 'US') parts.push(`It is offered ${f.sellerType === 'dealer' ? 'by a dealer ' : ''}with a ${f.titleStatus === 'clean' ? 'clean' : f.titleStatus} ${f.state ?? ''} title.`.replace('  ', ' '));
  if (!f.hasReserve) parts.push(`This ${noun} is offered with no reserve.`);

  const description = parts.join(' ');

  const mods: string[] = [];
  const modCount = f.condition === 'concours' ? 0 : f.condition === 'excellent' ? rng.int(0, 1) : rng.int(0, 3);
  const carMods = f.year < 1975 ? [...CAR_MODS, ...CLASSIC_MODS] : CAR_MODS;
  const modPool = f.kind === 'motorcycle' ? MOTO_MODS : f.bodyStyle === 'Pickup' || f.bodyStyle === 'SUV' ? [...TRUCK_MODS, ...carMods.slice(0, 8)] : carMods;
  mods.push(...pickSome(rng, modPool, modCount));

  const flaws: string[] = [];
  switch (f.condition) {
    case 'concours':
      if (rng.chance(0.3)) flaws.push(...pickSome(rng, FLAWS_MINOR, 1));
      break;
    case 'excellent':
      flaws.push(...pickSome(rng, FLAWS_MINOR, rng.int(0, 2)));
      break;
    case 'good':
      flaws.push(...pickSome(rng, FLAWS_MINOR, rng.int(1, 3)));
      break;
    case 'driver':
      flaws.push(...pickSome(rng, FLAWS_MINOR, rng.int(1, 3)), ...(f.year < 2000 ? pickSome(rng, FLAWS_RUST, 1) : []));
      break;
    case 'project':
      flaws.push(...pickSome(rng, FLAWS_RUST, rng.int(1, 3)), ...pickSome(rng, FLAWS_PROJECT, rng.int(1, 3)));
      break;
  }

  const service: string[] = [];
  if (f.condition !== 'project') {
    const count = rng.int(0, 3);
    const pool = f.kind === 'motorcycle' ? MOTO_SERVICE : SERVICE;
    for (const item of pickSome(rng, pool, count)) service.push(`${item} (${monthsBefore(f.endYear, f.endMonth, rng.int(1, 30))})`);
  }

  const details: string[] = [];
  if (f.vin) details.push(`${f.year >= 1981 ? 'VIN' : 'Chassis'}: ${f.vin}`);
  details.push(f.mileage == null ? 'TMU' : `${mileageShort(f.mileage)} ${f.mileageUnit === 'km' ? 'Kilometers' : 'Miles'} Shown`);
  if (f.engine) details.push(f.engine);
  if (f.transmission) details.push(f.transmission);
  if (f.exteriorColor) details.push(`${f.exteriorColor} Paint`);
  if (f.interiorColor && f.kind === 'car') details.push(`${f.interiorColor} Upholstery`);
  if (f.kind === 'car') details.push(...pickSome(rng, EQUIPMENT, rng.int(1, 4)));
  if (f.titleStatus && f.country === 'US') details.push(`${f.titleStatus === 'clean' ? 'Clean' : capitalizeWords(f.titleStatus)} ${f.state ?? ''} Title`.replace('  ', ' '));
  if (f.country === 'GB') details.push('UK V5C Registration Document');

  let ownership: string | null = null;
  const r = rng.next();
  if (r < 0.2) ownership = null;
  else if (r < 0.45) ownership = `${rng.pick(['One', 'Two', 'Three', 'Four'])}-owner ${f.kind === 'motorcycle' ? 'motorcycle' : 'car'}; the seller acquired it in ${Math.min(f.endYear, f.year + rng.int(1, Math.max(1, f.endYear - f.year)))}.`;
  else if (r < 0.7) ownership = `Delivered new ${f.country === 'US' ? `in ${f.state ?? 'California'}` : `to ${f.country === 'GB' ? 'the UK' : 'its first owner in Europe'}`}; the seller is the ${rng.pick(['second', 'third', 'fourth', 'fifth'])} owner.`;
  else if (r < 0.85) ownership = `Acquired by the seller in ${Math.max(f.year, f.endYear - rng.int(1, 25))} from a long-term ${rng.pick(['collector', 'enthusiast', 'family'])} owner.`;
  else ownership = `Imported in ${Math.max(f.year + 1, f.endYear - rng.int(1, 15))}; ownership history before then is partially documented.`;

  return { description, ownershipHistory: ownership, modifications: mods, knownFlaws: flaws, recentServiceHistory: service, listingDetails: details };
}

function capitalizeWords(text: string): string {
  return text.replace(/\b\w/g, (c) => c.toUpperCase());
}

/** A listing title in the style of the source. */
export function listingTitle(
  rng: Rng,
  style: 'bat' | 'plain' | 'uk',
  f: { year: number; listingMake: string; listingModel: string; bodyStyle: string | null; transmission: string | null; mileage: number | null; mileageUnit: 'mi' | 'km'; hasReserve: boolean; kind: 'car' | 'motorcycle'; endYear: number },
): string {
  let title = `${f.year} ${f.listingMake} ${f.listingModel}`;
  const lowerModel = f.listingModel.toLowerCase();
  if (f.kind === 'car' && f.bodyStyle && ['Coupe', 'Convertible', 'Targa', 'Roadster', 'Wagon', 'Spyder'].includes(f.bodyStyle) && !lowerModel.includes(f.bodyStyle.toLowerCase()) && rng.chance(style === 'bat' ? 0.6 : 0.35)) {
    title += ` ${f.bodyStyle === 'Convertible' && rng.chance(0.4) ? 'Cabriolet' : f.bodyStyle}`;
  }
  if (style === 'bat') {
    if (f.transmission && /^\d-Speed Manual$/.test(f.transmission) && rng.chance(0.35)) title += ` ${f.transmission.replace(' Manual', '')}`;
    if (f.mileage != null && f.mileageUnit === 'mi' && f.mileage >= 1000 && f.mileage < 30000 && f.endYear - f.year > 3 && rng.chance(0.6)) title = `${mileageShort(f.mileage)}-Mile ${title}`;
    else if (rng.chance(0.05)) title = `${rng.pick(['Modified', 'Original-Owner', 'One-Owner', 'Euro', 'Restored', 'Supercharged', 'Resto-Mod'])} ${title}`;
    if (!f.hasReserve) title = `No Reserve: ${title}`;
  } else if (style === 'uk') {
    if (rng.chance(0.15)) title += rng.chance(0.5) ? ' - RHD' : ' - LHD';
  }
  return title;
}
