import { createReadStream } from 'node:fs';
import { createInterface } from 'node:readline';
import { LIVE_STATUSES, describeCounts } from '@cars/datagen';
import { Client } from 'pg';

/** What an NDJSON file of observations holds, read before anything is sent. */
export interface FileSummary {
  /** Non-blank lines: what will be sent. */
  lines: number;
  /** Lines with an auction whose status is live ("active", "coming soon") or anything else. */
  live: number;
  completed: number;
  /** Lines without an auction (bids only). */
  bidOnly: number;
  bids: number;
  /** Lines that are not a JSON object with a source and source_auction_id (the ingestion rejects them). */
  unreadable: number;
  /** Distinct (source, source_auction_id) pairs. */
  auctions: number;
}

/** Distinct (source, source_auction_id) pairs of the file that the database already holds. */
export interface RewriteCheck {
  existing: number;
  examples: string[];
}

interface Key {
  source: string;
  id: string;
}

/** Keys are checked against the database this many at a time (one indexed join per batch). */
const CHECK_BATCH = 5000;
/** Beyond this many distinct pairs the file's duplicates are no longer tracked (memory stays bounded). */
const DISTINCT_LIMIT = 2_000_000;

const LIVE = new Set<string>(LIVE_STATUSES);

/**
 * Reads the file once: counts by kind, and — when `existing` is given — how many of its auctions
 * the database already holds, checked in batches of keys as the file is read.
 */
export async function inspectFile(
  file: string,
  existing?: (keys: Key[]) => Promise<Key[]>,
): Promise<{ summary: FileSummary; rewrite?: RewriteCheck }> {
  const summary: FileSummary = { lines: 0, live: 0, completed: 0, bidOnly: 0, bids: 0, unreadable: 0, auctions: 0 };
  const seen = new Set<string>();
  const found = new Set<string>();
  const examples: string[] = [];
  let pending: Key[] = [];
  const check = async () => {
    if (!existing || pending.length === 0) return;
    for (const key of await existing(pending)) {
      const text = `${key.source}/${key.id}`;
      if (!found.has(text) && examples.length < 3) examples.push(text);
      found.add(text);
    }
    pending = [];
  };
  const reader = createInterface({ input: createReadStream(file, 'utf8'), crlfDelay: Infinity });
  for await (const line of reader) {
    if (line.trim() === '') continue;
    summary.lines += 1;
    const observation = parse(line);
    if (!observation) {
      summary.unreadable += 1;
      continue;
    }
    if (observation.status === undefined) summary.bidOnly += 1;
    else if (LIVE.has(observation.status)) summary.live += 1;
    else summary.completed += 1;
    summary.bids += observation.bids;
    const text = `${observation.source}/${observation.id}`;
    if (seen.has(text)) continue;
    if (seen.size < DISTINCT_LIMIT) seen.add(text);
    summary.auctions += 1;
    pending.push({ source: observation.source, id: observation.id });
    if (pending.length >= CHECK_BATCH) await check();
  }
  await check();
  return { summary, ...(existing ? { rewrite: { existing: found.size, examples } } : {}) };
}

function parse(line: string): { source: string; id: string; status?: string; bids: number } | null {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return null;
  }
  if (typeof value !== 'object' || value === null) return null;
  const o = value as { source?: unknown; source_auction_id?: unknown; auction?: { status?: unknown } | null; bids?: unknown };
  if (typeof o.source !== 'string' || typeof o.source_auction_id !== 'string') return null;
  const status = o.auction && typeof o.auction === 'object' ? String(o.auction.status ?? '') : undefined;
  return { source: o.source, id: o.source_auction_id, status, bids: Array.isArray(o.bids) ? o.bids.length : 0 };
}

/** The keys of `keys` that the `auctions` table holds (one join over two arrays, on its unique index). */
export function existingAuctions(client: Client): (keys: Key[]) => Promise<Key[]> {
  return async (keys) => {
    const { rows } = await client.query<{ source: string; id: string }>(
      `SELECT a.source, a.source_auction_id AS id
         FROM unnest($1::text[], $2::text[]) AS k(source, id)
         JOIN auctions a ON a.source = k.source AND a.source_auction_id = k.id`,
      [keys.map((k) => k.source), keys.map((k) => k.id)],
    );
    return rows;
  };
}

/** "1,800 lines: 1,800 auctions (300 completed, 1,500 live), 10,799 bids" and the rest worth saying. */
export function describeFile(summary: FileSummary): string {
  const n = (v: number) => v.toLocaleString('en-US');
  const parts = [`${n(summary.lines)} lines: ${describeCounts(summary.completed, summary.live)}`];
  if (summary.bidOnly > 0) parts.push(`${n(summary.bidOnly)} bid-only updates`);
  parts.push(`${n(summary.bids)} bids`);
  if (summary.auctions !== summary.lines - summary.unreadable) parts.push(`${n(summary.auctions)} distinct auctions`);
  if (summary.unreadable > 0) parts.push(`${n(summary.unreadable)} unreadable lines (will be rejected)`);
  return parts.join(', ');
}
