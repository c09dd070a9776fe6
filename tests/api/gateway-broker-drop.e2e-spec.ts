import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { createDataSource } from '@cars/persistence';
import { createVhost, deleteVhost } from '@cars/testing';
import { DataSource } from 'typeorm';
import { AppProcess, freePort, startApp, waitForOk } from './support/processes';

const run = promisify(execFile);

/** The gateway's RPC timeout here: a request may take at most this (plus a margin), never hang. */
const RPC_TIMEOUT_MS = 3000;
/** From the drop until the gateway answers 200 again by itself. */
const RECOVERY_DEADLINE_MS = 20_000;

interface BrokerConnection {
  pid: string;
  vhost: string;
  name: string;
}

/** The broker's connections with their `connection_name` (what namedSocketOptions sets). */
async function brokerConnections(): Promise<BrokerConnection[]> {
  const { stdout } = await run('rabbitmqctl', ['-q', '--no-table-headers', 'list_connections', 'pid', 'vhost', 'client_properties'], { timeout: 30_000 });
  return stdout
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => {
      // pid <TAB> vhost <TAB> [{"connection_name","gateway query.rpc"},{"product","amqplib"},…]
      const [pid, vhost, properties = ''] = line.split('\t');
      const name = /\{"connection_name","([^"]*)"\}/.exec(properties)?.[1] ?? '';
      return { pid, vhost, name };
    });
}

interface Outcome {
  status: number | 'error';
  startedAt: number;
  ms: number;
}

/**
 * The broker drops the gateway's connections (an operator's `rabbitmqctl close_connection`, a
 * broker node restart) while clients keep sending requests: the gateway process keeps running,
 * every request in the gap ends with 200 or a 503 within the RPC timeout (never a hang, never a
 * connection reset), and it answers 200 again by itself once its connections are back.
 */
describe('the broker drops the gateway connections under load', () => {
  const vhost = `${process.env.TEST_RUN_ID}_broker_drop`.toLowerCase();
  const make = `Drill${process.pid}`;
  const apps: AppProcess[] = [];
  let db: DataSource;
  let gateway: AppProcess;
  let url: string;

  beforeAll(async () => {
    const rabbitUrl = createVhost(vhost);
    db = await createDataSource({ url: process.env.DATABASE_URL!, poolSize: 2 }).initialize();
    await db.query(`INSERT INTO makes (name) VALUES ($1) ON CONFLICT DO NOTHING`, [make]);
    await db.query(`INSERT INTO models (make_id, name) SELECT id, 'Drill One' FROM makes WHERE name = $1 ON CONFLICT DO NOTHING`, [make]);
    const env = { DATABASE_URL: process.env.DATABASE_URL!, RABBITMQ_URL: rabbitUrl, DATABASE_POOL_SIZE: '3', LOG_LEVEL: 'warn' };
    const queryPort = await freePort();
    apps.push(startApp('query', { ...env, HEALTH_PORT: String(queryPort) }));
    const port = await freePort();
    gateway = startApp('gateway', { ...env, PORT: String(port), HOST: '127.0.0.1', RPC_TIMEOUT_MS: String(RPC_TIMEOUT_MS) });
    apps.push(gateway);
    url = `http://127.0.0.1:${port}/models?make=${make}`;
    for (const [name, readyUrl] of [['query', `http://127.0.0.1:${queryPort}/health/ready`], ['gateway', `http://127.0.0.1:${port}/health/ready`]]) {
      await waitForOk(readyUrl, 30_000).catch((error: unknown) => {
        throw new Error(`${name}: ${String(error)}\n${apps.map((a) => a.output()).join('\n')}`);
      });
    }
  }, 60_000);

  afterAll(async () => {
    // Every process this spec started, whatever happened (stop() ends with SIGKILL if need be).
    await Promise.all(apps.map((app) => app.stop()));
    await db?.query(`DELETE FROM models WHERE make_id IN (SELECT id FROM makes WHERE name = $1)`, [make]).catch(() => undefined);
    await db?.query(`DELETE FROM makes WHERE name = $1`, [make]).catch(() => undefined);
    await db?.destroy();
    deleteVhost(vhost);
  });

  it('keeps running, answers 503 at worst during the gap, and 200 again by itself', async () => {
    const outcomes: Outcome[] = [];
    let sending = true;
    const client = async () => {
      while (sending) {
        const startedAt = Date.now();
        let status: Outcome['status'];
        try {
          const res = await fetch(url, { signal: AbortSignal.timeout(RPC_TIMEOUT_MS + 5000) });
          await res.arrayBuffer();
          status = res.status;
        } catch {
          status = 'error'; // a hang (the abort) or a reset connection
        }
        outcomes.push({ status, startedAt, ms: Date.now() - startedAt });
      }
    };
    const clients = Array.from({ length: 4 }, () => client());
    const until = async (what: string, condition: () => boolean | Promise<boolean>, timeoutMs: number) => {
      const deadline = Date.now() + timeoutMs;
      while (!(await condition())) {
        if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}\n${gateway.output().slice(-3000)}`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    };

    try {
      await until('requests answered before the drop', () => outcomes.filter((o) => o.status === 200).length >= 20, 20_000);

      const ours = (await brokerConnections()).filter((c) => c.vhost === vhost && c.name.startsWith('gateway '));
      // One per service client (query, stats, webhooks); the queue inspector's opens on demand.
      expect(ours.map((c) => c.name).filter((n) => n !== 'gateway queue-inspector').sort()).toEqual(['gateway query.rpc', 'gateway stats.rpc', 'gateway webhooks.rpc']);
      // The query service's connection last: the requests use it, so the gap follows `droppedAt`.
      ours.sort((a, b) => Number(a.name === 'gateway query.rpc') - Number(b.name === 'gateway query.rpc'));
      const firstDropAt = Date.now();
      for (const connection of ours) await run('rabbitmqctl', ['close_connection', connection.pid, 'drill'], { timeout: 30_000 });
      const droppedAt = Date.now();

      // 200 again, from a request that started after the drop.
      await until('200 again after the drop', () => outcomes.some((o) => o.startedAt > droppedAt && o.status === 200), RECOVERY_DEADLINE_MS);
      const recoveredAt = outcomes.find((o) => o.startedAt > droppedAt && o.status === 200)!.startedAt;
      // The gateway's connections are back, new ones.
      await until('the gateway connections back', async () => {
        const now = (await brokerConnections()).filter((c) => c.vhost === vhost && c.name.startsWith('gateway ') && c.name !== 'gateway queue-inspector');
        return now.length === 3 && now.every((c) => !ours.some((old) => old.pid === c.pid));
      }, RECOVERY_DEADLINE_MS);
      sending = false;
      await Promise.all(clients);

      const during = outcomes.filter((o) => o.startedAt >= firstDropAt - RPC_TIMEOUT_MS);
      expect(gateway.child.exitCode).toBeNull();
      expect(gateway.child.signalCode).toBeNull();
      expect([...new Set(during.map((o) => o.status))].filter((s) => s !== 200 && s !== 503)).toEqual([]);
      expect(during.filter((o) => o.ms > RPC_TIMEOUT_MS + 1000)).toEqual([]);
      expect(recoveredAt - droppedAt).toBeLessThan(RECOVERY_DEADLINE_MS);
      // The drop was felt (the gateway reconnects after a second): the gap's requests got 503.
      expect(during.filter((o) => o.status === 503).length).toBeGreaterThan(0);
      // A drop it recovers from is a warning; no error line, no crash.
      expect(gateway.output().split('\n').filter((line) => /"level":"(error|fatal)"|Unhandled|node:events|^\s+at /.test(line))).toEqual([]);
      // What the drill measured, for the record.
      const gap = during.filter((o) => o.status === 503);
      process.stdout.write(
        `broker drop: ${gap.length} × 503 of ${during.length} requests; 200 again ${recoveredAt - droppedAt} ms after the drop\n`,
      );
    } finally {
      sending = false;
      await Promise.all(clients);
    }
  }, 90_000);
});
