/** A one-line progress display on stderr: count, rate, ETA (redrawn on a TTY, periodic lines otherwise). */
export class Progress {
  private readonly started = Date.now();
  private lastDraw = 0;
  private done = 0;
  private readonly tty = Boolean(process.stderr.isTTY);

  constructor(private readonly total: number) {}

  tick(count = 1): void {
    this.done += count;
    const now = Date.now();
    if (now - this.lastDraw >= (this.tty ? 200 : 5000)) {
      this.lastDraw = now;
      this.draw();
    }
  }

  finish(): void {
    this.draw();
    if (this.tty) process.stderr.write('\n');
  }

  line(): string {
    const seconds = Math.max(0.001, (Date.now() - this.started) / 1000);
    const rate = this.done / seconds;
    const left = Math.max(0, this.total - this.done);
    const eta = rate > 0 ? left / rate : 0;
    const pct = this.total > 0 ? Math.min(100, Math.floor((this.done / this.total) * 100)) : 100;
    const width = 24;
    const filled = Math.round((pct / 100) * width);
    const bar = `${'#'.repeat(filled)}${'-'.repeat(width - filled)}`;
    return `ingest [${bar}] ${this.done.toLocaleString('en-US')}/${this.total.toLocaleString('en-US')} (${pct}%) ${Math.round(rate).toLocaleString('en-US')} obs/s ETA ${formatDuration(eta)}`;
  }

  private draw(): void {
    process.stderr.write(this.tty ? `\r${this.line()}\x1b[K` : `${this.line()}\n`);
  }
}

export function formatDuration(seconds: number): string {
  const s = Math.round(seconds);
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const r = s % 60;
  return h > 0 ? `${h}:${String(m).padStart(2, '0')}:${String(r).padStart(2, '0')}` : `${m}:${String(r).padStart(2, '0')}`;
}
