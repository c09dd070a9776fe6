import { parseArgs } from 'node:util';
import { DataSource } from 'typeorm';

export type Flags = Record<string, string | true>;

export interface AdminContext {
  flags: Flags;
  /** Opens (once) the database of DATABASE_URL or the quick-start instance. */
  db(): Promise<DataSource>;
}

export interface AdminCommand {
  name: string;
  usage: string;
  /** The JSON value printed on stdout. */
  run(context: AdminContext): Promise<unknown>;
}

export class UsageError extends Error {}

export function requireFlag(flags: Flags, name: string): string {
  const value = flags[name];
  if (typeof value !== 'string' || value.length === 0) throw new UsageError(`--${name} is required`);
  return value;
}

/**
 * The options a command takes, read from its usage line (one source of truth): `--name VALUE`
 * is a string option, `--name` alone (e.g. `[--verified]`) a boolean.
 */
export function optionsOf(usage: string): Record<string, { type: 'string' | 'boolean' }> {
  const options: Record<string, { type: 'string' | 'boolean' }> = {};
  for (const match of usage.matchAll(/--([a-z][a-z-]*)(\s+[^\s[\]-][^\s\]]*)?/g)) {
    options[match[1]] = { type: match[2] ? 'string' : 'boolean' };
  }
  return options;
}

/** A command's flags (node:util parseArgs, strict): an unknown flag or a missing value is a usage error. */
export function parseFlags(usage: string, args: string[]): Flags {
  let values: Record<string, string | boolean | undefined>;
  try {
    ({ values } = parseArgs({ args, options: optionsOf(usage), strict: true, allowPositionals: false }));
  } catch (error) {
    throw new UsageError(error instanceof Error ? error.message.split('\n')[0] : String(error));
  }
  const flags: Flags = {};
  for (const [name, value] of Object.entries(values)) if (value !== undefined && value !== false) flags[name] = value;
  return flags;
}
