import { parseArgs, ParseArgsConfig } from 'node:util';

/**
 * Command lines of the benchmarks: node:util parseArgs, strict (an unknown flag, a flag without
 * its value and a positional argument are usage errors), `--help`/`-h` for the usage. A usage
 * error prints the message and the usage on standard error, exit code 2.
 */

export class UsageError extends Error {}

export type FlagValues = Readonly<Record<string, string | boolean | undefined>>;

/** Flag name → `{ type: 'string' }` or `{ type: 'boolean' }` (no `multiple`: each flag at most once). */
export type FlagOptions = Readonly<Record<string, { type: 'string' | 'boolean' }>>;

/** The flags of `argv`, or 'help'. Throws UsageError. */
export function parseFlags(argv: readonly string[], options: FlagOptions): FlagValues | 'help' {
  const config: ParseArgsConfig = {
    args: [...argv],
    options: { ...options, help: { type: 'boolean', short: 'h' } },
    strict: true,
    allowPositionals: false,
  };
  let values: FlagValues;
  try {
    values = parseArgs(config).values as FlagValues;
  } catch (error) {
    // node:util's errors (checked by shape: they may come from another realm than this Error).
    const message = (error as { message?: unknown } | null)?.message;
    throw new UsageError(typeof message === 'string' ? message.split('\n')[0] : String(error));
  }
  return values.help === true ? 'help' : values;
}

function text(values: FlagValues, name: string): string | undefined {
  const value = values[name];
  if (value === undefined) return undefined;
  if (typeof value !== 'string') throw new UsageError(`--${name} needs a value`);
  return value;
}

/** A whole number of at least `min` (default 0). */
export function integerFlag(values: FlagValues, name: string, fallback: number, min = 0): number {
  const value = text(values, name);
  if (value === undefined) return fallback;
  const n = /^\d+$/.test(value) ? Number(value) : NaN;
  if (!Number.isSafeInteger(n) || n < min) throw new UsageError(`--${name} must be an integer of at least ${min} (got "${value}")`);
  return n;
}

/** A finite number, at least 0 or (`positive`) above 0. */
export function numberFlag(values: FlagValues, name: string, fallback: number, range: 'non-negative' | 'positive' = 'non-negative'): number {
  const value = text(values, name);
  if (value === undefined) return fallback;
  const n = value.trim() === '' ? NaN : Number(value);
  if (!Number.isFinite(n) || n < 0 || (range === 'positive' && n === 0)) {
    throw new UsageError(`--${name} must be a ${range} number (got "${value}")`);
  }
  return n;
}

/** A non-empty string. */
export function stringFlag(values: FlagValues, name: string, fallback: string): string {
  const value = text(values, name);
  if (value === undefined) return fallback;
  if (value === '') throw new UsageError(`--${name} must not be empty`);
  return value;
}

export function booleanFlag(values: FlagValues, name: string): boolean {
  return values[name] === true;
}

/**
 * The options of this process's command line: prints the usage and exits 0 for --help, prints
 * the error and the usage and exits 2 for a usage error.
 */
export function commandLine<O>(name: string, usage: string, parse: (argv: readonly string[]) => O | 'help'): O {
  let options: O | 'help';
  try {
    options = parse(process.argv.slice(2));
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    process.stderr.write(`${name}: ${error.message}\n\n${usage}\n`);
    process.exit(2);
  }
  if (options === 'help') {
    process.stdout.write(`${usage}\n`);
    process.exit(0);
  }
  return options;
}
