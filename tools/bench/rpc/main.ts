import 'reflect-metadata';
import { ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { RPC_QUEUE_ARGUMENTS, RpcPattern } from '@cars/contracts';
import { RmqServiceClient } from '@cars/messaging';
import { createVhost, deleteVhost } from '@cars/testing';
import { connect } from 'amqplib';
import { randomUUID } from 'node:crypto';
import { booleanFlag, commandLine, integerFlag, numberFlag, parseFlags } from '../common/args';
import { CpuTally, pidsNamed } from '../common/cpu';
import { percentile } from '../common/latency';
import { BenchRequest, ECHO_PATTERN, OURS_QUEUE, RAW_QUEUE, recordNoDelay } from './shared';

/**
 * The RabbitMQ request/response round trip (docs/performance.md):
 *
 *   npm run build && node dist/tools/bench/rpc/main.js [--callers 1,16] [--seconds 9] [--bytes 200] [--reply-bytes N] [--keep]
 *
 * Ours: RmqServiceClient → queue → DrainingRmqServer (a Nest microservice, as the query service
 * runs it) → an echo handler → direct reply-to. Raw: amqplib alone, the same queue arguments,
 * direct reply-to (`amq.rabbitmq.reply-to`), the server echoing the request's bytes. Both servers
 * live in one process of their own (servers.ts); the clients in this one. With `--reply-bytes N`
 * the answer is JSON text of N bytes instead of the echo — the shape of a query page (a small
 * request, a large JSON text reply, decoded to a string by the client as the gateway does). Ours and raw alternate in
 * slices of SLICE seconds so both see the same background load; closed loop with N callers.
 *
 * Prints throughput, p50/p99/max, the ratio ours/raw (target ≥ 0.7 at every caller count), CPU
 * per round trip of client, server and RabbitMQ (robust to other work on the machine; RabbitMQ's
 * share is its whole server's), whether every AMQP socket has Nagle's algorithm off, and any
 * ~40 ms mode (Nagle + delayed ACK). Exit code 1 when the ratio is missed or a 40 ms mode shows.
 * Server: TEST_RABBITMQ_BASE_URL (vhost `cars_bench_rpc`, removed afterwards unless --keep).
 */

interface Options {
  callers: number[];
  seconds: number;
  bytes: number;
  replyBytes?: number;
  keep: boolean;
}

const USAGE = `Usage: node dist/tools/bench/rpc/main.js [options]

  --callers LIST     concurrent callers, comma-separated (default 1,16)
  --seconds S        measured seconds per caller count and side, in slices of 3 s (default 9)
  --bytes N          payload size of a request (and its echo) in bytes (default 200)
  --reply-bytes N    answer with N bytes of JSON text instead of the echo (N ≥ 12)
  --keep             keep the vhost afterwards
  -h, --help         this text`;

function parseOptions(argv: readonly string[]): Options | 'help' {
  const flags = parseFlags(argv, {
    callers: { type: 'string' },
    seconds: { type: 'string' },
    bytes: { type: 'string' },
    'reply-bytes': { type: 'string' },
    keep: { type: 'boolean' },
  });
  if (flags === 'help') return 'help';
  const list = typeof flags.callers === 'string' ? flags.callers : '1,16';
  const callers = list.split(',').map((n) => integerFlag({ callers: n.trim() }, 'callers', 1, 1));
  return {
    callers,
    seconds: numberFlag(flags, 'seconds', 9, 'positive'),
    bytes: integerFlag(flags, 'bytes', 200, 0),
    replyBytes: flags['reply-bytes'] === undefined ? undefined : integerFlag(flags, 'reply-bytes', 0, 12),
    keep: booleanFlag(flags, 'keep'),
  };
}

const VHOST = 'cars_bench_rpc';
const SLICE = 3;
const RATIO_TARGET = 0.7;
const TIMEOUT_MS = 5000;
const log = (message: string) => process.stderr.write(`bench:rpc ${message}\n`);
const load = () => loadavg().map((l) => l.toFixed(2)).join(' ');

type Call = (payload: BenchRequest) => Promise<unknown>;

interface Side {
  samples: number[];
  seconds: number;
  errors: number;
  cpu: CpuTally;
}

interface SideResult {
  throughput: number;
  p50: number;
  p99: number;
  max: number;
  errors: number;
  /** Share of round trips of 36–48 ms, and of 20–32 ms (what a tail, not a mode, also puts there). */
  near40: number;
  near26: number;
  cpu: Record<string, number>;
}

/** The raw amqplib client: one channel, direct reply-to, replies matched by correlation id. */
async function rawClient(url: string, replies: 'echo' | 'text'): Promise<{ call: Call; close: () => Promise<void> }> {
  const connection = await connect(url, { noDelay: true });
  const channel = await connection.createChannel();
  await channel.assertQueue(RAW_QUEUE, { durable: true, arguments: RPC_QUEUE_ARGUMENTS });
  const waiting = new Map<string, (content: Buffer) => void>();
  await channel.consume(
    'amq.rabbitmq.reply-to',
    (message) => {
      if (message) waiting.get(message.properties.correlationId as string)?.(message.content);
    },
    { noAck: true },
  );
  const call: Call = (payload) =>
    new Promise((resolve, reject) => {
      const id = randomUUID();
      const timer = setTimeout(() => {
        waiting.delete(id);
        reject(new Error('timed out'));
      }, TIMEOUT_MS);
      waiting.set(id, (content) => {
        clearTimeout(timer);
        waiting.delete(id);
        // The echo parsed; a JSON text reply decoded only, as the gateway does with a page.
        resolve(replies === 'echo' ? JSON.parse(content.toString()) : content.toString());
      });
      channel.sendToQueue(RAW_QUEUE, Buffer.from(JSON.stringify(payload)), { replyTo: 'amq.rabbitmq.reply-to', correlationId: id });
    });
  return { call, close: () => connection.close() };
}

async function closedLoop(call: Call, callers: number, seconds: number, side: Side, payload: BenchRequest): Promise<void> {
  const start = performance.now();
  const end = start + seconds * 1000;
  await side.cpu.start();
  const caller = async () => {
    while (performance.now() < end) {
      const sent = performance.now();
      try {
        await call(payload);
        side.samples.push(performance.now() - sent);
      } catch {
        side.errors += 1;
      }
    }
  };
  await Promise.all(Array.from({ length: callers }, caller));
  await side.cpu.stop();
  side.seconds += (performance.now() - start) / 1000;
}

function result(side: Side): SideResult {
  const sorted = [...side.samples].sort((a, b) => a - b);
  const share = (lo: number, hi: number) => sorted.filter((ms) => ms >= lo && ms < hi).length / Math.max(1, sorted.length);
  return {
    throughput: sorted.length / side.seconds,
    p50: percentile(sorted, 50),
    p99: percentile(sorted, 99),
    max: sorted[sorted.length - 1] ?? NaN,
    errors: side.errors,
    near40: share(36, 48),
    near26: share(20, 32),
    cpu: side.cpu.perUnit(Math.max(1, sorted.length)),
  };
}

/** A mode around 40 ms: at least 1 % of round trips there, and clearly more than just below it. */
const fortyMsMode = (r: SideResult) => r.near40 >= 0.01 && r.near40 > 3 * r.near26;

function startServers(url: string, replyMode: boolean): { child: ChildProcess; ready: Promise<string> } {
  const child = spawn(process.execPath, [join(__dirname, 'servers.js')], {
    env: { ...process.env, RABBITMQ_URL: url, LOG_LEVEL: 'warn', REPLY_MODE: replyMode ? '1' : '0' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const ready = new Promise<string>((resolve, reject) => {
    const lines = createInterface({ input: child.stdout! });
    lines.on('line', (line) => {
      if (line.startsWith('ready ')) resolve(line.slice('ready '.length));
    });
    child.once('exit', (code) => reject(new Error(`the bench servers exited (${code})`)));
  });
  return { child, ready };
}

const fmt = (n: number) => (n >= 100 ? n.toFixed(0) : n.toFixed(2));

interface Row {
  callers: number;
  ours: SideResult;
  raw: SideResult;
}

/** Warm-up of both paths (JIT, channels). */
async function warmUp(oursCall: Call, rawCall: Call, payload: BenchRequest): Promise<void> {
  for (let i = 0; i < 200; i += 1) {
    await oursCall(payload);
    await rawCall(payload);
  }
}

/** Each caller count: ours and raw in a closed loop, alternating in slices of SLICE seconds, with their CPU. */
async function measure(options: Options, calls: { ours: Call; raw: Call }, payload: BenchRequest, serverPid: number): Promise<Row[]> {
  const groups = async () => ({ client: [process.pid], server: [serverPid], rabbitmq: pidsNamed('beam.smp') });
  const rows: Row[] = [];
  for (const callers of options.callers) {
    const sides = { ours: { samples: [], seconds: 0, errors: 0, cpu: new CpuTally(groups) }, raw: { samples: [], seconds: 0, errors: 0, cpu: new CpuTally(groups) } } as Record<'ours' | 'raw', Side>;
    const slices = Math.max(1, Math.round(options.seconds / SLICE));
    log(`${callers} caller(s): ${slices} × ${SLICE} s each side, alternating (load average ${load()})`);
    for (let i = 0; i < slices; i += 1) {
      await closedLoop(calls.ours, callers, SLICE, sides.ours, payload);
      await closedLoop(calls.raw, callers, SLICE, sides.raw, payload);
    }
    rows.push({ callers, ours: result(sides.ours), raw: result(sides.raw) });
  }
  return rows;
}

/** The tables and the JSON line on standard output; the exit code (1: a target missed, a 40 ms mode or an error). */
function report(options: Options, rows: Row[], noDelay: { client: string; servers: string }): number {
  const out: string[] = [
    `RPC benchmark: request/response over RabbitMQ (direct reply-to), ` +
      (options.replyBytes === undefined
        ? `${options.bytes}-byte payload each way; `
        : `${options.bytes}-byte request payload, ${options.replyBytes}-byte JSON text reply; `) +
      `${cpus().length} CPUs; load average at the end ${load()} (machine shared with other work)`,
    `Nagle off (setNoDelay) on AMQP sockets: bench client process ${noDelay.client}, servers process ${noDelay.servers}`,
    '',
    `Closed loop, ${options.seconds} s per side in alternating ${SLICE} s slices; latency in ms:`,
    `${'callers'.padEnd(8)} ${'ours req/s'.padStart(10)} ${'p50'.padStart(6)} ${'p99'.padStart(6)} ${'max'.padStart(6)} ${'err'.padStart(4)}` +
      ` | ${'raw req/s'.padStart(9)} ${'p50'.padStart(6)} ${'p99'.padStart(6)} ${'max'.padStart(6)} | ${'ratio'.padStart(5)} | 40 ms mode (ours/raw)`,
  ];
  for (const { callers, ours: o, raw: r } of rows) {
    const mode = (x: SideResult) => `${(x.near40 * 100).toFixed(2)}%${fortyMsMode(x) ? ' MODE' : ''}`;
    out.push(
      `${String(callers).padEnd(8)} ${fmt(o.throughput).padStart(10)} ${fmt(o.p50).padStart(6)} ${fmt(o.p99).padStart(6)} ${fmt(o.max).padStart(6)} ${String(o.errors).padStart(4)}` +
        ` | ${fmt(r.throughput).padStart(9)} ${fmt(r.p50).padStart(6)} ${fmt(r.p99).padStart(6)} ${fmt(r.max).padStart(6)} | ${(o.throughput / r.throughput).toFixed(2).padStart(5)} | ${mode(o)} / ${mode(r)}`,
    );
  }
  out.push('', 'CPU per round trip (µs, user + system, from /proc; RabbitMQ: its whole server, other users included):');
  out.push(`${'callers'.padEnd(8)} ${'side'.padEnd(5)} ${['client', 'server', 'rabbitmq', 'total'].map((n) => n.padStart(9)).join(' ')}`);
  for (const row of rows) {
    for (const side of ['ours', 'raw'] as const) {
      const cpu = row[side].cpu;
      out.push(`${String(row.callers).padEnd(8)} ${side.padEnd(5)} ${['client', 'server', 'rabbitmq', 'total'].map((n) => (cpu[n] ?? 0).toFixed(0).padStart(9)).join(' ')}`);
    }
  }
  const missed = rows.filter((r) => r.ours.throughput / r.raw.throughput < RATIO_TARGET).map((r) => r.callers);
  const modes = rows.filter((r) => fortyMsMode(r.ours) || fortyMsMode(r.raw)).map((r) => r.callers);
  const errors = rows.reduce((n, r) => n + r.ours.errors + r.raw.errors, 0);
  out.push('');
  out.push(`ours/raw throughput ≥ ${RATIO_TARGET} at every caller count: ${missed.length ? `MISSED (${missed.join(', ')} callers)` : 'ok'}`);
  out.push(`40 ms mode: ${modes.length ? `FOUND (${modes.join(', ')} callers)` : 'none'}; errors: ${errors}`);
  console.log(out.join('\n'));
  console.log(JSON.stringify({ bytes: options.bytes, replyBytes: options.replyBytes ?? null, rows, noDelay, load: loadavg() }));
  return missed.length === 0 && modes.length === 0 && errors === 0 ? 0 : 1;
}

async function main(): Promise<number> {
  const options = commandLine('bench:rpc', USAGE, parseOptions);
  log(`${cpus().length} CPUs, load average ${load()}`);
  const sockets = recordNoDelay();
  const url = createVhost(VHOST);
  const servers = startServers(url, options.replyBytes !== undefined);
  let ours: RmqServiceClient | undefined;
  let raw: Awaited<ReturnType<typeof rawClient>> | undefined;
  try {
    const serverNoDelay = await servers.ready;
    ours = new RmqServiceClient('bench', url, OURS_QUEUE, TIMEOUT_MS);
    await ours.connect();
    const client = ours;
    // The echo pattern is the bench's own, not one of the contracts' patterns.
    const oursCall: Call = (payload) => client.send(ECHO_PATTERN as RpcPattern, payload as never);
    raw = await rawClient(url, options.replyBytes === undefined ? 'echo' : 'text');
    const payload: BenchRequest = { text: 'x'.repeat(options.bytes), reply: options.replyBytes };
    await warmUp(oursCall, raw.call, payload);
    const rows = await measure(options, { ours: oursCall, raw: raw.call }, payload, servers.child.pid!);
    const clientNoDelay = `${sockets.filter((s) => s.noDelay).length}/${sockets.length}`;
    return report(options, rows, { client: clientNoDelay, servers: serverNoDelay });
  } finally {
    await ours?.onApplicationShutdown().catch(() => undefined);
    await raw?.close().catch(() => undefined);
    if (servers.child.exitCode === null) {
      const exited = once(servers.child, 'exit');
      servers.child.kill('SIGTERM');
      await exited;
    }
    if (!options.keep) deleteVhost(VHOST);
  }
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
