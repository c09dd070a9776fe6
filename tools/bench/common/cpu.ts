import { readdirSync, readFileSync } from 'node:fs';

/** Clock ticks per second of /proc's utime and stime (USER_HZ, 100 on Linux). */
const USER_HZ = 100;

/**
 * CPU time (ms, user + system) used so far by every process whose command name is `name`, read
 * from /proc: how a benchmark charges the database server's share of the work to what it
 * measures (e.g. `postgres`, whose backends all carry that name). Processes that exit between two
 * readings take their share with them, so take readings around work done on pooled connections.
 */
export function processesCpuMs(name: string): number {
  let ticks = 0;
  for (const pid of readdirSync('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    } catch {
      continue; // gone meanwhile
    }
    const close = stat.lastIndexOf(')');
    if (stat.slice(stat.indexOf('(') + 1, close) !== name) continue;
    // After "pid (comm) ": state is field 3, utime field 14, stime field 15.
    const fields = stat.slice(close + 2).split(' ');
    ticks += Number(fields[11]) + Number(fields[12]);
  }
  return (ticks * 1000) / USER_HZ;
}

/** CPU time (ms, user + system) this process has used so far. */
export function ownCpuMs(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
}
