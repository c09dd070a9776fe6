/** Command-line arguments of `npm run datagen`. */
import { parseArgs as parseCliArgs } from 'node:util';
import { DEFAULT_AUCTIONS, DEFAULT_LIVE, DEFAULT_SEED, currentUtcDate, parseDate } from '@cars/datagen';

export class UsageError extends Error {}

export interface CliOptions {
  auctions: number;
  live: number;
  seed: string;
  today: string;
  out: string;
  quiet: boolean;
}

export const USAGE = `Usage: npm run datagen -- --out FILE.ndjson [--auctions N] [--seed S] [--today YYYY-MM-DD] [--live N] [--quiet]

Writes a deterministic synthetic data set of auction observations (docs/api/ingestion.md), one JSON object
per line: N completed auctions (default ${DEFAULT_AUCTIONS}) ending from 2018-01-01 to the day before
--today, then --live live auctions (default ${DEFAULT_LIVE}) ending within 10 days after it.

  --out FILE      output file (written as FILE.tmp, then renamed); "-" writes to standard output
  --auctions N    completed auctions (default ${DEFAULT_AUCTIONS})
  --seed S        any string (default "${DEFAULT_SEED}")
  --today DATE    the data set's "today" (default: the current UTC date)
  --live N        live auctions (default ${DEFAULT_LIVE})
  --quiet         no progress on standard error

The output is byte-identical for the same --seed, --today, --auctions and --live.`;

function integer(name: string, value: string, max: number): number {
  if (!/^\d+$/.test(value)) throw new UsageError(`--${name} must be a non-negative integer (got "${value}")`);
  const n = Number(value);
  if (!Number.isSafeInteger(n) || n > max) throw new UsageError(`--${name} must be at most ${max} (got ${value})`);
  return n;
}

const OPTIONS = {
  auctions: { type: 'string' },
  live: { type: 'string' },
  seed: { type: 'string' },
  today: { type: 'string' },
  out: { type: 'string' },
  quiet: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const;

/** Parses `argv` (without node and script) with node:util parseArgs; throws UsageError with a message on bad input. */
export function parseArgs(argv: readonly string[]): CliOptions | 'help' {
  const { tokens } = parseCliArgs({ args: [...argv], options: OPTIONS, strict: false, allowPositionals: true, tokens: true });
  const values = new Map<string, string>();
  let quiet = false;
  for (const token of tokens) {
    if (token.kind === 'positional') throw new UsageError(`unexpected argument "${token.value}"`);
    if (token.kind !== 'option') continue;
    const name = token.name;
    if (name === 'help') return 'help';
    if (!(name in OPTIONS)) throw new UsageError(`unknown option --${name}`);
    if (name === 'quiet') {
      quiet = true;
      continue;
    }
    if (token.value === undefined) throw new UsageError(`--${name} needs a value`);
    if (values.has(name)) throw new UsageError(`--${name} given twice`);
    values.set(name, token.value);
  }
  const out = values.get('out');
  if (out === undefined || out === '') throw new UsageError('--out FILE is required');
  const today = values.get('today') ?? currentUtcDate();
  try {
    if (parseDate(today) < parseDate('2018-03-01')) throw new UsageError(`--today must be 2018-03-01 or later (got ${today})`);
  } catch (error) {
    if (error instanceof UsageError) throw error;
    throw new UsageError(`--today must be a date YYYY-MM-DD (got "${today}")`);
  }
  const seed = values.get('seed') ?? DEFAULT_SEED;
  if (seed === '') throw new UsageError('--seed must not be empty');
  return {
    auctions: values.has('auctions') ? integer('auctions', values.get('auctions') as string, 50_000_000) : DEFAULT_AUCTIONS,
    live: values.has('live') ? integer('live', values.get('live') as string, 1_000_000) : DEFAULT_LIVE,
    seed,
    today,
    out,
    quiet,
  };
}
