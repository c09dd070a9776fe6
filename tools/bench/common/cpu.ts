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

/** Pids of every process whose command name is `name` (e.g. `beam.smp`, RabbitMQ's). */
export function pidsNamed(name: string): number[] {
  const pids: number[] = [];
  for (const pid of readdirSync('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      if (stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')) === name) pids.push(Number(pid));
    } catch {
      // gone meanwhile
    }
  }
  return pids;
}

/** CPU time (ms, user + system) this process has used so far. */
export function ownCpuMs(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
}

/** CPU time (ms, user + system) used so far by the process `pid`; undefined when it is gone. */
export function readPidCpuMs(pid: number): number | undefined {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  // After "pid (comm) ": utime is field 14, stime field 15.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / USER_HZ;
}

/** CPU time (ms, user + system) used so far by the process `pid`; 0 when it is gone. */
export function pidCpuMs(pid: number): number {
  return readPidCpuMs(pid) ?? 0;
}

/**
 * CPU time of named groups of processes over a stretch of work, robust to other work on the
 * machine (unlike wall-clock throughput): `start()` reads every process of every group, `stop()`
 * reads them again and adds the differences up. A group's processes are listed anew at each reading
 * (a database pool may open connections meanwhile: one not seen at the start counts from 0).
 * Several start/stop stretches accumulate.
 */
export class CpuTally {
  private readonly before = new Map<number, number>();
  readonly ms = new Map<string, number>();

  constructor(private readonly groups: () => Promise<Record<string, readonly number[]>>) {}

  async start(): Promise<void> {
    this.before.clear();
    for (const pids of Object.values(await this.groups())) for (const pid of pids) this.before.set(pid, pidCpuMs(pid));
  }

  async stop(): Promise<void> {
    for (const [group, pids] of Object.entries(await this.groups())) {
      let ms = 0;
      for (const pid of pids) ms += Math.max(0, pidCpuMs(pid) - (this.before.get(pid) ?? 0));
      this.ms.set(group, (this.ms.get(group) ?? 0) + ms);
    }
  }

  /** µs of CPU per unit of work (e.g. per request) by group, and their sum as `total`. */
  perUnit(units: number): Record<string, number> {
    const out: Record<string, number> = {};
    let total = 0;
    for (const [group, ms] of this.ms) {
      out[group] = (ms * 1000) / units;
      total += out[group];
    }
    out.total = total;
    return out;
  }
}
