/** Where a long count stands: done of total, percentage, rate and time left. */
export interface ProgressSnapshot {
  done: number;
  total: number;
  /** Whole percent, 0–100. */
  percent: number;
  /** Items per second since the start. */
  rate: number;
  /** Seconds left at that rate (0 when done or no rate yet). */
  etaSeconds: number;
}

/**
 * Counts towards a known total and describes where it stands as one line:
 * `ingest [######------------------] 30,000/121,500 (24%) 5,012 obs/s ETA 0:18`.
 * Drawing is left to the caller: the ingest CLI redraws it on stderr, the quick start logs it.
 */
export class ProgressMeter {
  private readonly started: number;
  private done = 0;

  constructor(
    readonly total: number,
    private readonly label: string,
    private readonly unit = 'obs',
    private readonly now: () => number = Date.now,
  ) {
    this.started = now();
  }

  /** `count` more done. */
  tick(count = 1): void {
    this.done += count;
  }

  /** `done` in all (for callers that are told a running total). */
  set(done: number): void {
    this.done = done;
  }

  snapshot(): ProgressSnapshot {
    const seconds = Math.max(0.001, (this.now() - this.started) / 1000);
    const rate = this.done / seconds;
    const left = Math.max(0, this.total - this.done);
    const percent = this.total > 0 ? Math.min(100, Math.floor((this.done / this.total) * 100)) : 100;
    return { done: this.done, total: this.total, percent, rate, etaSeconds: rate > 0 ? left / rate : 0 };
  }

  line(): string {
    const { done, total, percent, rate, etaSeconds } = this.snapshot();
    const width = 24;
    const filled = Math.round((percent / 100) * width);
    const bar = `${'#'.repeat(filled)}${'-'.repeat(width - filled)}`;
    const n = (v: number) => v.toLocaleString('en-US');
    return `${this.label} [${bar}] ${n(done)}/${n(total)} (${percent}%) ${n(Math.round(rate))} ${this.unit}/s ETA ${formatDuration(etaSeconds)}`;
  }
}

/** `m:ss`, or `h:mm:ss` from an hour on. */
export function formatDuration(seconds: number): string {
  const s = Math.round(seconds);
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const r = s % 60;
  return h > 0 ? `${h}:${String(m).padStart(2, '0')}:${String(r).padStart(2, '0')}` : `${m}:${String(r).padStart(2, '0')}`;
}
