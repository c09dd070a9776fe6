import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { generateMasterKey } from '@cars/signing';

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

const SECRET_KEY_FILE = join(DATA_DIR, 'webhook-secret-key');

/**
 * WEBHOOK_SECRET_KEY, or else the quick start's own master key under `.data/` (made on first use,
 * readable by this user only). The distributed apps never fall back to it: they require the variable.
 */
export function resolveWebhookSecretKey(env: NodeJS.ProcessEnv = process.env): string {
  if (env.WEBHOOK_SECRET_KEY) return env.WEBHOOK_SECRET_KEY;
  mkdirSync(DATA_DIR, { recursive: true });
  try {
    writeFileSync(SECRET_KEY_FILE, `${generateMasterKey()}\n`, { flag: 'wx', mode: 0o600 });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
  return readFileSync(SECRET_KEY_FILE, 'utf8').trim();
}
