import 'reflect-metadata';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Observation, ObservationAuction } from '@cars/contracts';
import { SOURCES } from '@cars/persistence';
import { buildAuctionRow, buildBidRow, Normalizer, parseObservation, SourceContext } from '@cars/service-change-detector';

/**
 * The datagen tool and the ingestion contract agree: every line `npm run datagen -- --auctions
 * 2000 --seed 1` writes passes the observation DTO and builds rows (times, dates) without error.
 */
const DATAGEN = join(__dirname, '../../../dist/tools/datagen/src/main.js');

const sources = new Map<string, SourceContext>(
  SOURCES.map((s) => [s.id, { id: s.id, timezone: s.timezone, unsoldReportsHighBidOnly: s.unsoldReportsHighBidOnly, defaultCurrency: s.currencies[0] }]),
);

describe('datagen output against the observation contract', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'datagen-compat-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('validates every line of a 2,000-auction data set', () => {
    expect(existsSync(DATAGEN)).toBe(true);
    const file = join(dir, 'obs.ndjson');
    execFileSync(process.execPath, [DATAGEN, '--auctions', '2000', '--seed', '1', '--out', file], { stdio: 'ignore', timeout: 120000 });
    const lines = readFileSync(file, 'utf8').split('\n').filter((line) => line.trim() !== '');
    expect(lines.length).toBeGreaterThanOrEqual(2000);
    const normalizer = Normalizer.empty();
    const failures: string[] = [];
    let bids = 0;
    for (const [i, line] of lines.entries()) {
      const parsed = parseObservation(JSON.parse(line));
      if (!parsed.ok) {
        failures.push(`line ${i + 1}: ${parsed.reason}`);
        continue;
      }
      const observation: Observation = parsed.value;
      const source = sources.get(observation.source);
      if (!source) {
        failures.push(`line ${i + 1}: unknown source ${observation.source}`);
        continue;
      }
      try {
        if (observation.auction) buildAuctionRow(observation as Observation & { auction: ObservationAuction }, source, normalizer.normalize(null, null));
        for (const bid of observation.bids ?? []) {
          buildBidRow(bid, source);
          bids += 1;
        }
      } catch (error) {
        failures.push(`line ${i + 1}: ${error instanceof Error ? error.message : String(error)}`);
      }
    }
    expect(failures.slice(0, 10)).toEqual([]);
    // Bid rows were built too, not only auction rows.
    expect(bids).toBeGreaterThan(lines.length);
  });
});
