/** Command-line arguments of `npm run datagen`. */
import { parseArgs as parseCliArgs } from 'node:util';
import { DEFAULT_AUCTIONS, DEFAULT_LIVE, DEFAULT_SEED, currentUtcDate, parseDate } from '@cars/datagen';

export class UsageError extends Error {}

export interface CliOptions {
  auctions: number;
  live: number;
  seed: string;
  /** Set only when given; otherwise the generator derives it from the seed. */
  namespace?: string;
  today: string;
  out: string;
  quiet: boolean;
}

export const USAGE = `Usage: npm run datagen -- --out FILE.ndjson [--auctions N] [--live N] [--seed S] [--namespace NS] [--today YYYY-MM-DD] [--quiet]

Writes a deterministic synthetic data set of auction observations, one JSON object per line
(the format of docs/api/ingestion.md): N completed auctions ending from 2018-01-01 to the day before
--today, THEN --live live auctions ending within 10 days after it. The file holds N + live lines:
"--auctions 300" alone writes ${(300 + DEFAULT_LIVE).toLocaleString('en-US')} lines (add "--live 0" for completed auctions only).

  --out FILE      output file (written as FILE.tmp, then renamed); "-" writes to standard output
  --auctions N    completed auctions (default ${DEFAULT_AUCTIONS.toLocaleString('en-US')})
  --live N        live auctions, written after the completed ones (default ${DEFAULT_LIVE.toLocaleString('en-US')})
  --seed S        any string (default "${DEFAULT_SEED}", the demo data set of the quick start)
  --namespace NS  prefix of every source id ("NS-30001"), 1-32 letters, digits or "_"; default:
                  derived from the seed ("s<seed>", or a hash of a long seed; none for the
                  default seed), so data sets of different seeds never share an auction or bid id
                  and ingesting one never rewrites another's auctions
  --today DATE    the data set's "today" (default: the current UTC date)
  --quiet         no progress and no summary on standard error

The output is byte-identical for the same --seed, --namespace, --today, --auctions and --live.
When done it prints "N auctions (X completed, Y live), Z bids, W lines" and a JSON report on standard error.`;

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
  namespace: { type: 'string' },
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
  const namespace = values.get('namespace');
  if (namespace !== undefined && !/^[A-Za-z0-9_]{1,32}$/.test(namespace)) {
    throw new UsageError(`--namespace must be 1-32 letters, digits or "_" (got "${namespace}")`);
  }
  return {
    auctions: values.has('auctions') ? integer('auctions', values.get('auctions') as string, 50_000_000) : DEFAULT_AUCTIONS,
    live: values.has('live') ? integer('live', values.get('live') as string, 1_000_000) : DEFAULT_LIVE,
    seed,
    ...(namespace === undefined ? {} : { namespace }),
    today,
    out,
    quiet,
  };
}
