import { ProgressMeter } from '@cars/runtime';

/** The ingest CLI's progress on stderr: one line redrawn on a TTY, a line every 5 s otherwise. */
export class Progress {
  private readonly meter: ProgressMeter;
  private lastDraw = 0;
  private readonly tty = Boolean(process.stderr.isTTY);

  constructor(total: number) {
    this.meter = new ProgressMeter(total, 'ingest');
  }

  tick(count = 1): void {
    this.meter.tick(count);
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

  private draw(): void {
    const line = this.meter.line();
    process.stderr.write(this.tty ? `\r${line}\x1b[K` : `${line}\n`);
  }
}
