/**
 * `npm run cluster:up`: a three-node RabbitMQ cluster (rmq1..3@localhost, AMQP 5681-5683) and a
 * PostgreSQL primary (5441) with a streaming replica (5442) on this machine, in CARS_CLUSTER_DIR
 * (default /tmp/cars-cluster); any earlier one is removed first. Prints the settings that point the
 * apps at it. `npm run cluster:down` stops it all. See docs/operations.md ("Cluster drill").
 */
import { log } from '../common/infra';
import { CLUSTER_DIR, clusterUp, clusterUrls } from '../common/cluster';

async function main(): Promise<void> {
  await clusterUp();
  const urls = clusterUrls(undefined, 'postgres');
  log(`cluster up in ${CLUSTER_DIR}; the apps' settings (create a database and a vhost of your own first):`);
  process.stdout.write(`RABBITMQ_URL=${urls.rabbitmq}\nDATABASE_URL=${urls.database}\nREAD_DATABASE_URL=${urls.readDatabase}\n`);
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(`cluster:up failed: ${error instanceof Error ? error.message : String(error)}`);
    process.exit(1);
  },
);
