import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { EVENT_SAMPLES, EventTypes } from '@cars/contracts';
import Ajv2020 from 'ajv/dist/2020';
import { startTestGateway } from './support/stack';

jest.setTimeout(60_000);

const CATALOG = join(__dirname, '..', '..', 'docs', 'api', 'events.md');

/** The fenced JSON sample under each "### `type`" heading of the catalog. */
function catalogSamples(markdown: string): Record<string, unknown> {
  const samples: Record<string, unknown> = {};
  for (const match of markdown.matchAll(/^### `([a-z.]+)`\n\n```json\n([\s\S]*?)\n```/gm)) samples[match[1]!] = JSON.parse(match[2]!);
  return samples;
}

/**
 * The event catalog: the gateway serves the generated JSON Schema at /schemas/events.json (public,
 * not counted, cacheable, linked from /openapi.json); every sample validates against it, and the
 * samples of docs/api/events.md are the generated ones.
 */
describe('event catalog (/schemas/events.json, docs/api/events.md)', () => {
  let gateway: NestFastifyApplication;
  let base: string;
  let schema: Record<string, unknown>;

  beforeAll(async () => {
    ({ gateway, url: base } = await startTestGateway());
    const res = await fetch(`${base}/schemas/events.json`);
    expect(res.status).toBe(200);
    schema = (await res.json()) as Record<string, unknown>;
  });

  afterAll(async () => {
    await gateway?.close();
  });

  it('is public, cacheable and revalidated by ETag; /openapi.json links to it', async () => {
    const res = await fetch(`${base}/schemas/events.json`);
    expect(res.headers.get('content-type')).toBe('application/schema+json; charset=utf-8');
    expect(res.headers.get('cache-control')).toBe('public, max-age=3600');
    expect(res.headers.get('x-ratelimit-remaining')).toBeNull(); // not counted
    const etag = res.headers.get('etag');
    expect(etag).toMatch(/^"[\w-]+"$/);
    expect((await fetch(`${base}/schemas/events.json`, { headers: { 'if-none-match': etag! } })).status).toBe(304);
    const openapi = (await (await fetch(`${base}/openapi.json`)).json()) as { externalDocs?: { url: string }; paths: Record<string, unknown> };
    expect(openapi.externalDocs?.url).toBe('/schemas/events.json');
    expect(Object.keys(openapi.paths)).toContain('/schemas/events.json');
  });

  it('has one definition per event type, and every sample validates against the served schema', () => {
    const ajv = new Ajv2020({ strict: true, allErrors: true });
    const validate = ajv.compile(schema);
    const defs = schema.$defs as Record<string, { examples: unknown[] }>;
    for (const type of Object.values(EventTypes)) {
      expect(defs[type]?.examples).toEqual([EVENT_SAMPLES[type]]);
      const valid = validate(EVENT_SAMPLES[type]);
      expect({ type, errors: valid ? null : validate.errors }).toEqual({ type, errors: null });
    }
    // The rules the catalog states: the auction id is a string, the end time has no offset.
    const ended = structuredClone(EVENT_SAMPLES['auction.ended']) as unknown as { data: { auction: { id: unknown } } };
    ended.data.auction.id = 48213;
    expect(validate(ended)).toBe(false);
    expect(EVENT_SAMPLES['auction.ended'].data.auction.auction_end_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d$/);
    expect(validate({ ...EVENT_SAMPLES['webhook.test'], type: 'webhook.unknown' })).toBe(false);
  });

  it("the catalog's samples are the generated ones, one per event type", () => {
    const documented = catalogSamples(readFileSync(CATALOG, 'utf8'));
    expect(Object.keys(documented).sort()).toEqual(Object.values(EventTypes).sort());
    for (const type of Object.values(EventTypes)) expect({ type, sample: documented[type] }).toEqual({ type, sample: EVENT_SAMPLES[type] });
  });
});
