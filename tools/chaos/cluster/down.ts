/** `npm run cluster:down`: stops the cluster of `cluster:up` and removes its directory. */
import { log } from '../common/infra';
import { CLUSTER_DIR, clusterDown } from '../common/cluster';

clusterDown().then(
  () => {
    log(`cluster down; ${CLUSTER_DIR} removed`);
    process.exit(0);
  },
  (error: unknown) => {
    console.error(`cluster:down failed: ${error instanceof Error ? error.message : String(error)}`);
    process.exit(1);
  },
);
