import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { createDatabase, createVhost, deleteVhost, dropDatabase } from '@cars/testing';
import { request } from './support/http';
import { AppProcess, freePort, startApp, waitForOk } from './support/processes';

const run = promisify(execFile);
const DIST = join(__dirname, '../../dist/tools');

/**
 * A production deploy ingests with nothing done by hand: an EMPTY database, the deploy path's
 * database step (`admin db:migrate`, what the k8s migrations Job and compose's `migrate` run),
 * the apps as separate processes, `ingest FILE` → auctions visible through the API. Also: a
 * bids-only observation waits for its parent and goes on when the parent arrives in a later file.
 */
describe('deploy path on an empty database', () => {
  const name = `${process.env.TEST_RUN_ID}_deploy_path`.toLowerCase();
  const vhostName = `${process.env.TEST_RUN_ID}_deploy_path`;
  const apps: AppProcess[] = [];
  let env: Record<string, string>;
  let gatewayUrl: string;
  let dir: string;

  const tool = async (script: string, ...args: string[]) => {
    const { stdout } = await run(process.execPath, [join(DIST, script, 'src', 'main.js'), ...args], {
      env: { ...process.env, ...env },
    });
    return JSON.parse(stdout.trim().split('\n').pop()!) as Record<string, unknown>;
  };

  const observation = (id: string, status: string, bids: object[] = [], withAuction = true) => ({
    source: 'bringatrailer',
    source_auction_id: id,
    observed_at: new Date().toISOString(),
    ...(withAuction
      ? {
          auction: {
            url: `https://bringatrailer.com/listing/${id}`,
            title: `1967 Porsche 911S ${id}`,
            status,
            price: 145000,
            currency: 'USD',
            year: 1967,
            make: 'Porsche',
            model: '911S Coupe',
            auction_end_at: '2025-06-01T19:00:00',
            auction_end_date: '2025-06-01',
            bid_count: 3,
            sale_type: 'auction',
            price_type: 'sold',
          },
        }
      : {}),
    bids,
  });

  const ingest = async (file: string, lines: (object | string)[], ...flags: string[]) => {
    const path = join(dir, file);
    writeFileSync(path, lines.map((line) => (typeof line === 'string' ? line : JSON.stringify(line))).join('\n') + '\n');
    return tool('ingest', path, ...flags);
  };

  const waitFor = async (what: string, check: () => Promise<boolean>, timeoutMs = 20_000) => {
    const deadline = Date.now() + timeoutMs;
    while (!(await check())) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}\n${apps.map((a) => a.output()).join('\n').slice(-4000)}`);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  };

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'deploy-path-'));
    env = {
      DATABASE_URL: await createDatabase(name),
      RABBITMQ_URL: createVhost(vhostName),
      DATABASE_POOL_SIZE: '3',
    };
  }, 30_000);

  afterAll(async () => {
    await Promise.all(apps.map((app) => app.stop()));
    deleteVhost(vhostName);
    await dropDatabase(name);
    rmSync(dir, { recursive: true, force: true });
  });

  it('migrates and loads the reference catalog in one step, idempotently', async () => {
    const first = await tool('admin', 'db:migrate');
    expect((first.applied as string[]).length).toBeGreaterThan(5);
    expect(first.reference).toMatchObject({ sources: 7 });
    expect((first.reference as { makes: number }).makes).toBeGreaterThan(50);
    const again = await tool('admin', 'db:migrate');
    expect(again.reference).toEqual({ sources: 0, makes: 0, makeAliases: 0, models: 0, modelAliases: 0 });
  }, 60_000);

  it('ingests into an empty deploy with nothing done by hand, and a bid waits for its parent', async () => {
    const detectorHealth = await freePort();
    apps.push(startApp('change-detector', { ...env, HEALTH_PORT: String(detectorHealth), PENDING_REPLAY_INTERVAL_MS: '500' }));
    apps.push(startApp('query', { ...env, HEALTH_PORT: String(await freePort()) }));
    const port = await freePort();
    apps.push(startApp('gateway', { ...env, PORT: String(port), HOST: '127.0.0.1', METERING_ENABLED: 'false' }));
    gatewayUrl = `http://127.0.0.1:${port}`;
    await waitForOk(`${gatewayUrl}/health/ready`, 30_000);

    const bid = { source_bid_id: 'b-1', bidder_name: 'flat6fan', amount: 140000, currency: 'USD', bid_at: '2025-06-01T18:00:00' };
    // --wait reports what became of each observation: applied, waiting for its context, refused.
    const published = await ingest(
      'first.ndjson',
      [observation('deploy-1', 'sold'), observation('deploy-2', 'sold', [bid], false), '{"not": "an observation"}'],
      '--wait',
    );
    expect(published).toMatchObject({ published: 3, applied: 1, pending: 1, rejected: 1, waiting: 0 });

    await waitFor('deploy-1 in /auctions', async () => {
      const res = await request(`${gatewayUrl}/auctions?make=Porsche`);
      return res.status === 200 && res.body.meta.total === 1;
    });
    const pending = await tool('admin', 'pending:show');
    expect(pending).toMatchObject({ count: 1, by_reason: { 'parent auction not stored': 1 } });
    expect(typeof pending.oldest_age_seconds).toBe('number');
    // The change-detector's readiness shows the backlog too (without failing on it).
    await waitFor('the backlog in the readiness detail', async () => {
      const ready = await request(`http://127.0.0.1:${detectorHealth}/health/ready`);
      return ready.status === 200 && ready.body.detail?.pending_observations?.count === 1;
    });

    // The parent arrives in a later file: the parked bid goes on with it.
    await ingest('second.ndjson', [observation('deploy-2', 'sold')]);
    await waitFor('deploy-2 with its bid', async () => {
      const res = await request(`${gatewayUrl}/auctions?make=Porsche&sort=bids`);
      const two = (res.body.data ?? []).find((a: { url: string }) => a.url.endsWith('deploy-2'));
      if (!two) return false;
      const bids = await request(`${gatewayUrl}/auctions/${two.id}/bids`);
      return bids.body.meta?.total === 1;
    });
    expect(await tool('admin', 'pending:show')).toMatchObject({ count: 0, oldest_age_seconds: null });
  }, 90_000);
});
