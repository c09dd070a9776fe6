import 'reflect-metadata';
import { availableParallelism, loadavg } from 'node:os';
import { commandLine, booleanFlag, integerFlag, numberFlag, parseFlags, stringFlag, UsageError } from '../common/args';
import { criticalPath, histogram, Journey, pipelineStages, summarizeMs, Summary } from './stages';
import { Apps, deliveryCheck, journeys, measureClockOffset, NAME, setUp, tearDown, Topology } from './topology';
import { bareLoop, clock, ObservationPublisher, Receiver } from './traffic';

/**
 * Latency benchmark: what a webhook customer sees, from a scraper's publish to the receiver.
 *
 *   npm run bench:latency [-- --rates 10,30,300,80% --seconds 30 --max N]
 *
 * Distributed topology on this machine: RabbitMQ (vhost `cars_bench_latency`) and PostgreSQL
 * (database `cars_bench_latency`), both recreated and dropped at the end; the change-detector and
 * the delivery worker as built (dist/apps/…), each its own process with its production defaults
 * (consumer batches of ≤ 1000 waiting ≤ 5 ms, two at a time; the outbox relay beside it; the
 * delivery worker's `delivery.events` intake, LISTEN wake-ups, fan-out, dispatcher and sender);
 * one account on the 100K plan with one subscription to `auction.created` at a loopback receiver
 * in this process, which reads every body.
 *
 * This process publishes new live auctions to `observations` as a scraper does (persistent, on a
 * confirm channel), open loop at each rate for `--seconds`; every observation makes one
 * `auction.created` and one delivery. Per rate: publish → receiver's first byte (p50/p90/p99/max,
 * a histogram), the lost (not arrived by `--drain-seconds` after the last publish) and the time
 * in each stage from the database's stamps: the event row (`events.created_at`, the
 * change-detector's batch transaction start), the relay (`events.published_at`), the delivery row
 * (`webhook_deliveries.created_at`, the fan-out transaction start), the claim and the commits of
 * the batch and of the fan-out (triggers of the bench's database only write them to side tables:
 * recording the outcome clears the lease, and no row keeps a commit time), the receiver's arrival. The database's clock is
 * converted to this process's with an offset measured at the start (same system clock: it is
 * printed, a few tens of µs).
 *
 * Baseline, same run, same rate: a bare undici keep-alive POST loop of signed webhook bodies to
 * the same receiver (the receiver's floor); the ratio of the pipeline's p50 and p99 to it.
 *
 * `80%` in `--rates` is a share of the whole path's maximum: `--max N`, or measured first with a
 * burst of `--burst` observations published as fast as the broker confirms them (delivered / time
 * from the first publish to the last arrival).
 *
 * Servers: TEST_POSTGRES_ADMIN_URL and TEST_RABBITMQ_BASE_URL, as the test suite uses. Exit code 1
 * when an observation was lost or delivered twice, or a delivery did not succeed at its first attempt.
 */

const USAGE = `Usage: node dist/tools/bench/latency/main.js [options]

  --rates LIST          observations/s, comma-separated; N% is a share of the maximum (default 10,30,300,80%)
  --seconds S           length of each rate's run (default 30)
  --max N               the whole path's maximum (observations/s), instead of measuring it
  --burst N             observations of the saturating run that measures the maximum (default 3000)
  --drain-seconds S     how long stragglers are waited for after the last publish (default 30)
  --baseline-seconds S  length of the receiver's floor run at each rate (default 5)
  --keep                keep the database and vhost afterwards
  -h, --help            this text`;

/** A rate: observations per second, or a share of the measured maximum. */
type Rate = { perSecond: number } | { shareOfMax: number };

interface Options {
  rates: Rate[];
  seconds: number;
  max: number | undefined;
  burst: number;
  drainSeconds: number;
  baselineSeconds: number;
  keep: boolean;
}

function parseRates(text: string): Rate[] {
  return text.split(',').map((part) => {
    const item = part.trim();
    const share = /^(\d+(?:\.\d+)?)%$/.exec(item);
    if (share && Number(share[1]) > 0) return { shareOfMax: Number(share[1]) / 100 };
    const n = Number(item);
    if (item !== '' && Number.isFinite(n) && n > 0) return { perSecond: n };
    throw new UsageError(`--rates: "${item}" is neither a positive number nor a share like 80%`);
  });
}

function parseOptions(argv: readonly string[]): Options | 'help' {
  const flags = parseFlags(argv, {
    rates: { type: 'string' },
    seconds: { type: 'string' },
    max: { type: 'string' },
    burst: { type: 'string' },
    'drain-seconds': { type: 'string' },
    'baseline-seconds': { type: 'string' },
    keep: { type: 'boolean' },
  });
  if (flags === 'help') return 'help';
  const max = numberFlag(flags, 'max', 0);
  return {
    rates: parseRates(stringFlag(flags, 'rates', '10,30,300,80%')),
    seconds: numberFlag(flags, 'seconds', 30, 'positive'),
    max: max > 0 ? max : undefined,
    burst: integerFlag(flags, 'burst', 3000, 1),
    drainSeconds: numberFlag(flags, 'drain-seconds', 30, 'positive'),
    baselineSeconds: numberFlag(flags, 'baseline-seconds', 5, 'positive'),
    keep: booleanFlag(flags, 'keep'),
  };
}

/** At most this many observations per rate (the account's monthly allowance is 100,000 deliveries). */
const MAX_PER_RUN = 30_000;

const out = (line: string) => process.stdout.write(`${line}\n`);
const ms = (x: number) => (Number.isNaN(x) ? '–' : x >= 100 ? x.toFixed(0) : x.toFixed(1));
const load = () => loadavg().map((l) => l.toFixed(2)).join(' ');
const pct = (s: Summary) => `p50 ${ms(s.p50)} ms, p90 ${ms(s.p90)} ms, p99 ${ms(s.p99)} ms, max ${ms(s.max)} ms`;

/** Transactions among the journeys: distinct transaction start times (`now()` is one value per transaction). */
const transactions = (path: readonly Journey[], at: (j: Journey) => number) => new Set(path.map(at)).size;

interface Bench {
  topology: Topology;
  receiver: Receiver;
  publisher: ObservationPublisher;
  apps: Apps;
  offsetMs: number;
  options: Options;
}

/** Publishes `count` at `rate`, then waits for every arrival (or the drain deadline); the lost are the missing. */
async function pass(bench: Bench, count: number, rate: number): Promise<{ sent: Map<string, number>; achieved: number; lost: number }> {
  const { at: sent, achieved } = await bench.publisher.run(count, rate);
  const ids = [...sent.keys()];
  await bench.receiver.awaitAll(ids, clock() + bench.options.drainSeconds * 1000);
  bench.apps.check();
  return { sent, achieved, lost: ids.filter((id) => !bench.receiver.arrivals.has(id)).length };
}

/** The whole path's maximum: a burst as fast as the broker confirms, delivered / (last arrival − first publish). */
async function measureMax(bench: Bench): Promise<number> {
  const { sent, lost } = await pass(bench, bench.options.burst, Infinity);
  const first = Math.min(...sent.values());
  const last = Math.max(...[...sent.keys()].flatMap((id) => bench.receiver.arrivals.get(id)?.at ?? []));
  const max = (sent.size - lost) / ((last - first) / 1000);
  out(`maximum (saturating burst of ${sent.size} observations, first publish → last arrival): ${max.toFixed(0)} observations delivered/s; lost ${lost}`);
  return max;
}

function stageLines(title: string, stages: { name: string; ms: number[] }[]): void {
  out(`  ${title}`);
  const width = Math.max(...stages.map((s) => s.name.length));
  for (const stage of stages) {
    const s = summarizeMs(stage.ms);
    out(`    ${stage.name.padEnd(width)}  p50 ${ms(s.p50).padStart(6)} ms   p99 ${ms(s.p99).padStart(6)} ms   (n ${s.n})`);
  }
}

/** One rate: the receiver's floor, then the pipeline; prints its figures. Returns the lost count. */
async function measureRate(bench: Bench, rate: number): Promise<number> {
  const { options, receiver, topology } = bench;
  const floor = await bareLoop(receiver, Math.max(1, Math.round(rate * Math.min(options.baselineSeconds, options.seconds))), rate, topology.secret);
  const count = Math.min(MAX_PER_RUN, Math.max(1, Math.round(rate * options.seconds)));
  const loadBefore = load();
  const { sent, achieved, lost } = await pass(bench, count, rate);
  const path: Journey[] = await journeys(topology.db, sent, receiver, bench.offsetMs);
  const whole = path.map((j) => j.firstByte - j.published);
  const all = summarizeMs(whole);
  const base = summarizeMs(floor.ms);
  out('');
  out(
    `${rate.toFixed(rate < 10 ? 1 : 0)} observations/s (${achieved.toFixed(1)}/s achieved) for ${(count / rate).toFixed(0)} s: ${count} published, ` +
      `${count - lost} delivered, lost ${lost}; load average ${loadBefore} → ${load()}`,
  );
  out(`  publish → receiver's first byte: ${pct(all)}`);
  for (const line of histogram(whole)) out(`    ${line}`);
  out(
    `  receiver's floor (bare undici POST loop, same rate, ${floor.ms.length} requests, ${floor.achieved.toFixed(1)}/s): ${pct(base)}; ` +
      `ratio ${(all.p50 / base.p50).toFixed(0)}× at p50, ${(all.p99 / base.p99).toFixed(0)}× at p99`,
  );
  stageLines('stages (the relay is a branch: the fan-out is woken at the events commit too, so "relayed → claimed" < 0 when the claim came first):', pipelineStages(path));
  const claimFirst = path.filter((j) => j.claimed !== null && j.relayed !== null && j.claimed < j.relayed).length;
  const fanOutAfterRelay = path.filter((j) => j.relayed !== null && j.fannedOut > j.relayed).length;
  // Stamped by the fan-out's own commit trigger, a few µs after its commit stamp; a claim's lease
  // statement can only end after that commit has completed.
  const leasedByFanOut = path.filter((j) => j.claimed !== null && j.fanOutCommitted !== null && j.claimed - j.fanOutCommitted < 0.05).length;
  out(
    `    claimed before the relay's transaction began: ${claimFirst} of ${path.length}; ` +
      `fanned out by a pass that began after the relay's transaction: ${fanOutAfterRelay} of ${path.length}; ` +
      `leased by the fan-out itself (no claim): ${leasedByFanOut} of ${path.length}`,
  );
  out(
    `    change-detector batches: ${transactions(path, (j) => j.applied)} (${(path.length / transactions(path, (j) => j.applied)).toFixed(1)} observations each); ` +
      `fan-out transactions: ${transactions(path, (j) => j.fannedOut)} (${(path.length / transactions(path, (j) => j.fannedOut)).toFixed(1)} deliveries each)`,
  );
  stageLines('the delivery path, stage by stage (adds up to publish → first byte):', criticalPath(path));
  return lost;
}

async function run(options: Options): Promise<number> {
  out(`bench:latency — ${availableParallelism()} cores, load average ${load()}`);
  const receiver = new Receiver();
  await receiver.start();
  let topology: Topology | undefined;
  let apps: Apps | undefined;
  let publisher: ObservationPublisher | undefined;
  try {
    topology = await setUp(receiver);
    apps = new Apps(topology);
    apps.start();
    await apps.ready();
    publisher = new ObservationPublisher(topology.rabbitUrl);
    await publisher.start();
    const clockOffset = await measureClockOffset(topology.db);
    out(
      `database ${NAME}, vhost ${NAME}; change-detector pid ${apps.pids()['change-detector']}, delivery worker pid ${apps.pids()['delivery-worker']}; ` +
        `database clock − this clock: ${(clockOffset.offsetMs * 1000).toFixed(0)} µs (± ${((clockOffset.roundTripMs / 2) * 1000).toFixed(0)} µs)`,
    );
    const bench: Bench = { topology, receiver, publisher, apps, offsetMs: clockOffset.offsetMs, options };

    const warm = await pass(bench, 100, 50);
    out(`warm-up: 100 observations at 50/s, lost ${warm.lost}`);
    let lost = warm.lost;
    const needsMax = options.rates.some((r) => 'shareOfMax' in r);
    const max = needsMax ? (options.max ?? (await measureMax(bench))) : undefined;
    if (options.max !== undefined) out(`maximum: ${options.max} observations/s (--max)`);
    for (const rate of options.rates) {
      const perSecond = 'perSecond' in rate ? rate.perSecond : max! * rate.shareOfMax;
      lost += await measureRate(bench, perSecond);
    }

    const check = await deliveryCheck(topology.db);
    out('');
    out(
      `deliveries: ${check.firstAttempt} of ${check.total} succeeded at their first attempt; ${receiver.duplicates} duplicate arrivals; ` +
        `${lost} observations lost in all`,
    );
    return lost === 0 && receiver.duplicates === 0 && check.firstAttempt === check.total ? 0 : 1;
  } finally {
    await publisher?.close();
    await apps?.stop();
    receiver.close();
    await tearDown(topology, options.keep);
  }
}

run(commandLine('bench:latency', USAGE, parseOptions)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(`bench:latency failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
    process.exit(2);
  },
);
