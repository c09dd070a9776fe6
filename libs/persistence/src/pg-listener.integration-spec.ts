import { createServer, Server, Socket } from 'node:net';
import { Client } from 'pg';
import { PgListener } from './pg-listener';

const URL = process.env.DATABASE_URL!;
/** Names of this file's own: its connections and channel are told apart from other specs'. */
const APP = `pg-listener-spec-${process.pid}`;
const CHANNEL = `pg_listener_spec_${process.pid}`;

let admin: Client;

beforeAll(async () => {
  admin = new Client({ connectionString: URL });
  admin.on('error', () => undefined);
  await admin.connect();
});

afterAll(async () => {
  await admin.end();
});

/** The backends of this file's listeners that are connected now. */
async function backends(): Promise<number[]> {
  const { rows } = await admin.query<{ pid: number }>(
    `SELECT pid FROM pg_stat_activity WHERE application_name = $1 AND datname = current_database()`,
    [APP],
  );
  return rows.map((r) => r.pid);
}

async function until(condition: () => boolean | Promise<boolean>, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

interface Recorded {
  notifications: string[];
  listening: number;
  errors: string[];
}

function listener(options: { url?: string; reconnectDelayMs?: number } = {}): { listener: PgListener; seen: Recorded } {
  const seen: Recorded = { notifications: [], listening: 0, errors: [] };
  const created = new PgListener({
    url: options.url ?? URL,
    channels: [CHANNEL],
    applicationName: APP,
    onNotification: (channel, payload) => seen.notifications.push(`${channel}:${payload}`),
    onListening: () => (seen.listening += 1),
    onError: (message) => seen.errors.push(message),
    reconnectDelayMs: options.reconnectDelayMs ?? 20,
  });
  return { listener: created, seen };
}

describe('PgListener', () => {
  afterEach(async () => {
    await until(async () => (await backends()).length === 0, 'no listener connection left');
  });

  it('receives notifications, and after the server cuts its connection it listens again by itself', async () => {
    const { listener: subject, seen } = listener();
    await subject.start();
    expect(subject.listening).toBe(true);
    await admin.query(`SELECT pg_notify($1, 'one')`, [CHANNEL]);
    await until(() => seen.notifications.length === 1, 'the first notification');

    const [pid] = await backends();
    await admin.query(`SELECT pg_terminate_backend($1)`, [pid]);
    await until(() => seen.listening === 2, 'listening again');
    expect(seen.errors).toEqual(['LISTEN connection lost (terminating connection due to administrator command); reconnecting']);
    const [again] = await backends();
    expect(again).not.toBe(pid);

    await admin.query(`SELECT pg_notify($1, 'two')`, [CHANNEL]);
    await until(() => seen.notifications.length === 2, 'the second notification');
    expect(seen.notifications).toEqual([`${CHANNEL}:one`, `${CHANNEL}:two`]);
    await subject.stop();
    expect(subject.listening).toBe(false);
  });

  it('never reconnects once stopped: stop() during the reconnect delay leaves no timer and no connection', async () => {
    const { listener: subject, seen } = listener({ reconnectDelayMs: 60_000 });
    await subject.start();
    const [pid] = await backends();
    await admin.query(`SELECT pg_terminate_backend($1)`, [pid]);
    await until(() => seen.errors.length === 1, 'the loss reported');
    await subject.stop();
    // The retry it had scheduled is gone: nothing can bring the connection back.
    expect((subject as unknown as { retry?: NodeJS.Timeout }).retry).toBeUndefined();
    expect(await backends()).toEqual([]);
    expect(seen.listening).toBe(1);
  });

  it('stop() during connect() resolves once that connection is closed', async () => {
    const { listener: subject, seen } = listener();
    const starting = subject.start();
    // Once the connection is being made (its backend exists), stop.
    await until(async () => (await backends()).length === 1, 'the connection being made', 10_000);
    await subject.stop();
    expect(await backends()).toEqual([]);
    await starting;
    expect(subject.listening).toBe(false);
    expect(seen.errors).toEqual([]);
  });

  describe('a server that drops the connection while it is being made', () => {
    let server: Server;
    let url: string;
    const sockets = new Set<Socket>();

    beforeAll(async () => {
      // Accepts, reads the startup message, then resets: the client fails inside connect().
      server = createServer((socket) => {
        sockets.add(socket);
        socket.once('data', () => socket.resetAndDestroy());
        socket.on('error', () => undefined);
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      const address = server.address() as { port: number };
      url = `postgres://nobody@127.0.0.1:${address.port}/none`;
    });

    afterAll(async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    });

    it('reports each failure, keeps retrying without an unhandled error, and stops for good', async () => {
      const { listener: subject, seen } = listener({ url });
      await subject.start();
      await until(() => seen.errors.length >= 3, 'three failed attempts');
      await subject.stop();
      expect(seen.errors.every((message) => /^LISTEN connection lost \(.+\); reconnecting$/.test(message))).toBe(true);
      expect(subject.listening).toBe(false);
      expect((subject as unknown as { retry?: NodeJS.Timeout }).retry).toBeUndefined();
      expect((subject as unknown as { connecting?: Promise<void> }).connecting).toBeUndefined();
    });
  });
});
