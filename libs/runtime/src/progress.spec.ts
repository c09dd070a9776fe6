import { ProgressMeter, formatDuration } from './progress';

describe('ProgressMeter', () => {
  it('describes done of total with percentage, rate and time left', () => {
    let now = 1_000_000;
    const meter = new ProgressMeter(121_500, 'demo data', 'obs', () => now);
    now += 6_000;
    meter.set(30_000);
    expect(meter.snapshot()).toEqual({ done: 30_000, total: 121_500, percent: 24, rate: 5_000, etaSeconds: 18.3 });
    expect(meter.line()).toBe('demo data [######------------------] 30,000/121,500 (24%) 5,000 obs/s ETA 0:18');
    meter.tick(91_500);
    expect(meter.line()).toMatch(/\[#{24}\] 121,500\/121,500 \(100%\) .* ETA 0:00$/);
  });

  it('formats durations as m:ss and h:mm:ss', () => {
    expect(formatDuration(0)).toBe('0:00');
    expect(formatDuration(75.4)).toBe('1:15');
    expect(formatDuration(3_725)).toBe('1:02:05');
  });
});
