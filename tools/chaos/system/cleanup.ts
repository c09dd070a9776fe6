import { ChildProcess } from 'node:child_process';
import { deleteVhost, dropDatabase, log } from '../common/infra';
import { isRunning, stopProcess } from '../common/processes';

/** Everything the clean-up must reach, even when the drill fails half-way or is interrupted. */
export const state = {
  children: new Set<ChildProcess>(),
  databaseName: '',
  vhost: '',
  closers: [] as (() => Promise<void>)[],
  /** Run last, after the database and vhost are gone (the cluster drill stops the cluster it started). */
  finalizers: [] as (() => Promise<void>)[],
  finishing: false,
};

let cleaning: Promise<void> | null = null;
export function cleanUp(): Promise<void> {
  cleaning ??= (async () => {
    state.finishing = true;
    await Promise.all([...state.children].filter(isRunning).map((child) => stopProcess(child, 'SIGTERM', 12_000)));
    for (const close of state.closers.splice(0)) await close().catch(() => undefined);
    if (state.databaseName) await dropDatabase(state.databaseName);
    if (state.vhost) deleteVhost(state.vhost);
    for (const finalize of state.finalizers.splice(0)) await finalize().catch((error: unknown) => log(`clean-up: ${String(error)}`));
  })();
  return cleaning;
}

/** SIGINT/SIGTERM clean up and exit 130; any exit kills the processes still running. */
export function cleanUpOnExit(): void {
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      log(`${signal}: stopping every process and removing the database and vhost`);
      void cleanUp().finally(() => process.exit(130));
    });
  }
  process.on('exit', () => {
    for (const child of state.children) if (isRunning(child)) child.kill('SIGKILL');
  });
}
