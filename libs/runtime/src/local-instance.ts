import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

/**
 * What a running quick-start instance records under `.data/` so the operator CLIs can reach it
 * without DATABASE_URL / RABBITMQ_URL.
 */
export interface LocalInstance {
  pid: number;
  databaseUrl: string;
  baseUrl: string;
  /** Loopback-only ingestion entry point of the quick start (observations as NDJSON). */
  ingestUrl?: string;
}

export const DATA_DIR = join(process.cwd(), '.data');
const INSTANCE_FILE = join(DATA_DIR, 'instance.json');

export function writeLocalInstance(instance: LocalInstance): void {
  mkdirSync(dirname(INSTANCE_FILE), { recursive: true });
  writeFileSync(INSTANCE_FILE, JSON.stringify(instance, null, 2));
}

export function readLocalInstance(): LocalInstance | null {
  if (!existsSync(INSTANCE_FILE)) return null;
  return JSON.parse(readFileSync(INSTANCE_FILE, 'utf8')) as LocalInstance;
}

/** DATABASE_URL, or else the quick-start instance's embedded database. */
export function resolveDatabaseUrl(env: NodeJS.ProcessEnv = process.env): string {
  if (env.DATABASE_URL) return env.DATABASE_URL;
  const local = readLocalInstance();
  if (local) return local.databaseUrl;
  throw new Error('Set DATABASE_URL, or start the quick-start instance first (npm start).');
}
