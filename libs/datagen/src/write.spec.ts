import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { generateObservations } from './generator';
import type { Observation } from './observation';
import { writeLines, writeNdjsonFile } from './write';

describe('NDJSON writing', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'datagen-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('writes one JSON object per line and renames the temporary file into place', async () => {
    const file = join(dir, 'out.ndjson');
    const result = await writeNdjsonFile(file, generateObservations({ auctions: 300, live: 20, seed: 's', today: '2025-06-01' }));
    expect(result.count).toBe(320);
    const content = readFileSync(file, 'utf8');
    expect(Buffer.byteLength(content)).toBe(result.bytes);
    const rows = content.trimEnd().split('\n');
    expect(rows).toHaveLength(320);
    for (const row of rows) expect(JSON.parse(row)).toHaveProperty('source_auction_id');
    expect(readdirSync(dir)).toEqual(['out.ndjson']);
  });

  it('leaves no file behind when generation fails', async () => {
    const file = join(dir, 'broken.ndjson');
    function* failing(): Generator<Observation> {
      yield* generateObservations({ auctions: 10, live: 0, seed: 's', today: '2025-06-01' });
      throw new Error('boom');
    }
    await expect(writeNdjsonFile(file, failing())).rejects.toThrow('boom');
    expect(existsSync(file)).toBe(false);
    expect(existsSync(`${file}.tmp`)).toBe(false);
  });

  it('waits for a slow consumer (backpressure) and loses nothing', async () => {
    let received = '';
    let writes = 0;
    const slow = new Writable({
      highWaterMark: 1024,
      write(chunk: Buffer, _encoding, callback) {
        received += chunk.toString();
        writes++;
        setTimeout(callback, 1);
      },
    });
    const result = await writeLines(slow, generateObservations({ auctions: 1500, live: 0, seed: 'b', today: '2025-06-01' }));
    await new Promise<void>((resolve) => slow.end(resolve));
    expect(received.trimEnd().split('\n')).toHaveLength(result.count);
    expect(Buffer.byteLength(received)).toBe(result.bytes);
    expect(writes).toBeGreaterThan(1);
  });
});
