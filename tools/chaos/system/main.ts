/**
 * The whole system under faults (`npm run chaos:system`). In a database and a RabbitMQ vhost of its
 * own it runs the six apps as processes (two gateway replicas behind the drill's own round-robin
 * load balancer), two webhook endpoints on loopback receivers, a steady bounded API load (mixed
 * routes, one paid key) and a steady bounded stream of observations (new auctions, their updates
 * and their ends). Then, one after the other with a pause between: a SIGTERM rolling restart of
 * each app (a gateway leaves the rotation before its SIGTERM, as Kubernetes removes the endpoint,
 * and its replacement joins once ready; any other app's replacement is ready before the old one
 * gets SIGTERM), a SIGKILL of each app (restarted as a Deployment would), a RabbitMQ restart and a
 * PostgreSQL restart. It reports, per fault, the API requests that failed in its window (by status;
 * connection errors and timeouts as their own kinds) and the time to recover without an operator
 * (every app ready, API probes answered through every gateway, and the first auction published
 * after the fault delivered as a webhook); then the end state: every observation applied once,
 * each auction's events what the emission rules give, every (event, subscription) pair received,
 * the ledgers exact, nothing left `sending`, nothing reserved.
 *
 * Exit 0 when every end-state check passes, every fault recovered and the SIGTERM rolls failed no
 * request; else 1. It restarts this machine's PostgreSQL and RabbitMQ unless --skip-restarts:
 * run it alone. Flags (all optional):
 *   --rate N            API requests per second (default 50)
 *   --ingest-rate N     observations per second (default 100: a third new auctions, a third
 *                       updates, a third ends)
 *   --faults LIST       comma-separated fault ids or prefixes (default all): term, kill,
 *                       term:query, kill:gateway, kill:gateway#2, rabbitmq, postgres, …
 *   --skip-restarts     no RabbitMQ or PostgreSQL restart (only the drill's own processes)
 *   --pause S           seconds between faults (default 5)
 *   --recovery-timeout S  how long a fault may take to recover (default 120)
 *   --max-auctions N    new auctions at most (default 12000; keeps the deliveries within the
 *                       subscriber's 100K allowance)
 */
import { cleanUp, cleanUpOnExit } from './cleanup';
import { runDrill } from './drill';

cleanUpOnExit();

void runDrill()
  .then(
    (code) => code,
    (error: unknown) => {
      console.error(error);
      return 1;
    },
  )
  .then(async (code) => {
    await cleanUp();
    process.exit(code);
  });
