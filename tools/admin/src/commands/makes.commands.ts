import { NormalizationService } from '@cars/service-change-detector';
import { AdminCommand, requireFlag, UsageError } from '../command';

const positiveInt = (value: string | true | undefined, name: string, fallback: number): number => {
  if (value === undefined) return fallback;
  const n = typeof value === 'string' ? Number(value) : NaN;
  if (!Number.isInteger(n) || n < 1) throw new UsageError(`--${name} must be a positive integer`);
  return n;
};

/**
 * Normalization maintenance (none of these emits events):
 * - `reference:load` loads sources, makes, models and their aliases from the shipped catalog;
 *   existing rows and operator decisions are kept.
 * - `makes:alias --alias X --make Y [--create]` maps the listing spelling X to the canonical make Y
 *   (case-insensitive). An unknown Y is an error unless --create adds it as a canonical make.
 * - `makes:exclude --alias X` records X as a confirmed exclusion (not a vehicle make): its
 *   auctions stay stored, their events are suppressed.
 * - `normalize:rebuild [--batch-size N]` recomputes ocd_make_name / ocd_model_name of every auction.
 * The alias commands re-normalize the auctions listed under that spelling right away.
 */
export const makesCommands: AdminCommand[] = [
  {
    name: 'reference:load',
    usage: 'reference:load',
    async run({ db }) {
      return new NormalizationService(await db()).loadReference();
    },
  },
  {
    name: 'makes:alias',
    usage: 'makes:alias --alias X --make Y [--create]',
    async run({ flags, db }) {
      const alias = requireFlag(flags, 'alias');
      const make = requireFlag(flags, 'make');
      return new NormalizationService(await db()).setAlias(alias, make, flags.create === true || flags.create === 'true');
    },
  },
  {
    name: 'makes:exclude',
    usage: 'makes:exclude --alias X',
    async run({ flags, db }) {
      return new NormalizationService(await db()).exclude(requireFlag(flags, 'alias'));
    },
  },
  {
    name: 'normalize:rebuild',
    usage: 'normalize:rebuild [--batch-size N]',
    async run({ flags, db }) {
      const batchSize = positiveInt(flags['batch-size'], 'batch-size', 5000);
      return new NormalizationService(await db()).rebuild({ batchSize });
    },
  },
];
