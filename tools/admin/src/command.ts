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

export function parseFlags(args: string[]): Flags {
  const flags: Flags = {};
  for (let i = 0; i < args.length; i += 1) {
    const arg = args[i];
    if (!arg.startsWith('--')) throw new UsageError(`unexpected argument "${arg}"`);
    const [name, inline] = arg.slice(2).split(/=(.*)/s, 2);
    if (inline !== undefined) flags[name] = inline;
    else if (i + 1 < args.length && !args[i + 1].startsWith('--')) flags[name] = args[(i += 1)];
    else flags[name] = true;
  }
  return flags;
}
