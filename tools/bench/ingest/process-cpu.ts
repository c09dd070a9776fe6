import { readFileSync } from 'node:fs';
import { ownCpuMs, readPidCpuMs } from '../common/cpu';

/** Clock ticks per second of /proc's utime and stime (USER_HZ, 100 on Linux). */
const USER_HZ = 100;

/** Busy and total CPU time of the machine (all cores, /proc/stat ticks); undefined off Linux. */
export function machineCpu(): { busyMs: number; totalMs: number } | undefined {
  try {
    const fields = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
    const idle = fields[3] + (fields[4] ?? 0); // idle + iowait
    const total = fields.slice(0, 8).reduce((a, b) => a + b, 0);
    return { busyMs: ((total - idle) * 1000) / USER_HZ, totalMs: (total * 1000) / USER_HZ };
  } catch {
    return undefined;
  }
}

/**
 * CPU used by groups of processes over one stretch of work, read at every `sample()`: a process
 * seen at the first reading counts from its CPU then, one that appears later (a pool connection
 * opened meanwhile) from 0, and one that exits keeps what its last reading showed. Sample often
 * (the benchmark does at each poll) so a process that exits takes little with it.
 */
export class ProcessGroupsCpu {
  private readonly first = new Map<number, number>();
  private readonly last = new Map<number, { group: string; ms: number }>();
  private started = false;
  private readonly machineBefore = machineCpu();
  private readonly ownBefore = ownCpuMs();

  constructor(private readonly groups: () => Promise<Record<string, readonly number[]>>) {}

  async sample(): Promise<void> {
    for (const [group, pids] of Object.entries(await this.groups())) {
      for (const pid of pids) {
        const ms = readPidCpuMs(pid);
        if (ms === undefined) continue; // gone: its last reading stands
        if (!this.started) this.first.set(pid, ms);
        this.last.set(pid, { group, ms });
      }
    }
    this.started = true;
  }

  /**
   * µs of CPU per unit of work by group, plus this process (`bench`), the machine (every process,
   * /proc/stat) and how busy the machine was (`machine_busy_percent`).
   */
  perUnit(units: number): Record<string, number> {
    const ms = new Map<string, number>();
    for (const [pid, { group, ms: now }] of this.last) ms.set(group, (ms.get(group) ?? 0) + Math.max(0, now - (this.first.get(pid) ?? 0)));
    const out: Record<string, number> = {};
    for (const [group, total] of ms) out[group] = Math.round((total * 1000) / units);
    out.bench = Math.round(((ownCpuMs() - this.ownBefore) * 1000) / units);
    const machine = machineCpu();
    if (this.machineBefore && machine && machine.totalMs > this.machineBefore.totalMs) {
      const busy = machine.busyMs - this.machineBefore.busyMs;
      out.machine = Math.round((busy * 1000) / units);
      out.machine_busy_percent = Math.round((100 * busy) / (machine.totalMs - this.machineBefore.totalMs));
    }
    return out;
  }
}
