/**
 * `npm run datagen -- --out FILE.ndjson [--auctions N] [--live N] [--seed S] [--namespace NS] [--today YYYY-MM-DD]`
 * (see USAGE). Exit codes: 0 done, 1 failure while writing, 2 bad arguments.
 */
import { USAGE, UsageError, parseArgs } from './args';
import { describeCounts, generateObservations, idNamespace, newSummary } from '@cars/datagen';
import { writeLines, writeNdjsonFile } from '@cars/datagen';
import { errorMessage } from '@cars/contracts';

async function main(argv: readonly string[]): Promise<number> {
  let options;
  try {
    options = parseArgs(argv);
  } catch (error) {
    if (error instanceof UsageError) {
      process.stderr.write(`datagen: ${error.message}\n\n${USAGE}\n`);
      return 2;
    }
    throw error;
  }
  if (options === 'help') {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  const total = options.auctions + options.live;
  const started = Date.now();
  let lastReport = 0;
  const progress = (count: number): void => {
    if (options.quiet) return;
    const now = Date.now();
    if (count < total && now - lastReport < 1000) return;
    lastReport = now;
    const pct = total === 0 ? 100 : Math.floor((count / total) * 100);
    process.stderr.write(`datagen: ${count.toLocaleString('en-US')}/${total.toLocaleString('en-US')} (${pct}%) ${((now - started) / 1000).toFixed(1)}s\n`);
  };
  const summary = newSummary();
  const generate = { auctions: options.auctions, live: options.live, seed: options.seed, namespace: options.namespace, today: options.today };
  const namespace = options.namespace ?? idNamespace(options.seed);
  if (!options.quiet) {
    process.stderr.write(
      `datagen: writing ${describeCounts(options.auctions, options.live)} = ${total.toLocaleString('en-US')} lines, ` +
        `${namespace === '' ? 'ids without a namespace (the demo data set)' : `ids in namespace "${namespace}"`}\n`,
    );
  }
  const observations = generateObservations(generate, summary);
  const result =
    options.out === '-'
      ? await writeLines(process.stdout, observations, progress)
      : await writeNdjsonFile(options.out, observations, progress);
  if (!options.quiet) {
    const report = {
      out: options.out,
      seed: options.seed,
      namespace,
      today: options.today,
      observations: result.count,
      bytes: result.bytes,
      seconds: Number(((Date.now() - started) / 1000).toFixed(1)),
      completed: summary.completed,
      live: summary.live,
      bids: summary.bids,
      junk_listings: summary.junk,
      listings_with_make_alias: summary.aliasedMakes,
      canonical_makes: summary.makes.size,
      canonical_models: summary.models.size,
      by_source_status: summary.bySourceStatus,
    };
    process.stderr.write(`${JSON.stringify(report, null, 2)}\n`);
    process.stderr.write(
      `datagen: ${options.out === '-' ? 'wrote' : `${options.out} holds`} ${describeCounts(summary.completed, summary.live)}, ` +
        `${summary.bids.toLocaleString('en-US')} bids, ${result.count.toLocaleString('en-US')} lines\n`,
    );
  }
  return 0;
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(`datagen: ${errorMessage(error)}\n`);
    process.exitCode = 1;
  },
);
