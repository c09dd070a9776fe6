import { ensureDemoAccounts } from '@cars/accounts';
import { DEFAULT_AUCTIONS, DEFAULT_LIVE, generateObservations, observationCount } from '@cars/datagen';
import { pgPoolOf, readInstanceState, writeInstanceState } from '@cars/persistence';
import { ProgressMeter } from '@cars/runtime';
import { bulkLoadObservations, NormalizationService } from '@cars/service-change-detector';
import type { Logger } from 'pino';
import { DataSource } from 'typeorm';

export interface PreparedData {
  /** Lines for the start banner (demo keys, data set state). */
  messages: string[];
  /** Work that goes on after the server listens (the demo data set on first start). */
  background: Promise<void>;
  /** Stops the background work at the next chunk boundary and waits for it (a stop during the load). */
  cancel(): Promise<void>;
}

class LoadCanceled extends Error {}

/**
 * The observations until `signal` aborts: then the loader stops with LoadCanceled. Making them is
 * CPU work without I/O; every `YIELD_EVERY` observations the event loop gets a turn, so a stop
 * signal (and a request) is handled within milliseconds rather than after a whole chunk.
 */
async function* untilAborted<T>(items: Iterable<T>, signal: AbortSignal): AsyncGenerator<T> {
  let count = 0;
  for (const item of items) {
    if (++count % YIELD_EVERY === 0) await new Promise<void>((resolve) => setImmediate(resolve));
    if (signal.aborted) throw new LoadCanceled('stopped');
    yield item;
  }
}

const YIELD_EVERY = 200;
/** The demo load logs where it stands this often. */
const PROGRESS_EVERY_MS = 5000;

const DEMO_DATA = 'demo_data';

/**
 * Reference data and demo accounts before the server listens (both idempotent and quick); the
 * demo data set on first start, in the background, through the same normalization and row code
 * as the pipeline, without events. A load cut short is simply run again on the next start.
 */
export async function prepareData(
  dataSource: DataSource,
  options: { loadDemoData: boolean; log: Logger },
): Promise<PreparedData> {
  const reference = await new NormalizationService(dataSource).loadReference();
  options.log.debug({ reference }, 'reference data loaded');

  const demo = await ensureDemoAccounts(pgPoolOf(dataSource));
  const width = Math.max(...demo.map((d) => d.planName.length));
  const messages = [
    '',
    'Demo API keys (Authorization: Bearer <key>):',
    ...demo.map((d) => `  ${d.planName.padEnd(width)}  ${d.apiKey}  (${d.monthlyLimit.toLocaleString('en-US')} requests/month)`),
  ];

  const loaded = await readInstanceState(pgPoolOf(dataSource), DEMO_DATA);
  if (!options.loadDemoData || loaded !== null) {
    return { messages, background: Promise.resolve(), cancel: () => Promise.resolve() };
  }

  // The data set's size, said as the generator makes it: completed auctions plus live ones.
  const count = (n: number) => n.toLocaleString('en-US');
  const demoSet = { auctions: DEFAULT_AUCTIONS, live: DEFAULT_LIVE };
  messages.push(
    '',
    `Loading the demo data set (${count(observationCount(demoSet))} auctions: ${count(demoSet.auctions)} completed, ${count(demoSet.live)} live) in the background; progress is logged.`,
  );
  const abort = new AbortController();
  const background = (async () => {
    const started = Date.now();
    const meter = new ProgressMeter(observationCount(demoSet), 'demo data');
    let lastLog = 0;
    const result = await bulkLoadObservations(dataSource, untilAborted(generateObservations(demoSet), abort.signal), {
      onProgress: (count) => {
        meter.set(count);
        if (Date.now() - lastLog > PROGRESS_EVERY_MS) {
          lastLog = Date.now();
          const { done, total, percent, etaSeconds } = meter.snapshot();
          options.log.info(
            { observations: done, total, percent, eta_seconds: Math.round(etaSeconds), progress: meter.line() },
            'loading the demo data set',
          );
        }
      },
    });
    await writeInstanceState(
      pgPoolOf(dataSource),
      DEMO_DATA,
      JSON.stringify({ loaded_at: new Date().toISOString(), auctions: result.auctions, bids: result.bids }),
    );
    const seconds = ((Date.now() - started) / 1000).toFixed(1);
    options.log.info({ auctions: result.auctions, bids: result.bids, seconds }, 'demo data set loaded');
    process.stdout.write(`Demo data set loaded: ${result.auctions} auctions, ${result.bids} bids in ${seconds} s\n`);
  })().catch((error: unknown) => {
    if (error instanceof LoadCanceled) {
      options.log.info('loading the demo data set stopped; it goes on at the next start');
    } else {
      options.log.error({ err: error }, 'loading the demo data set failed; it is retried on the next start');
    }
  });
  const cancel = async () => {
    abort.abort();
    await background;
  };
  return { messages, background, cancel };
}
