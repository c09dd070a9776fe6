import { criticalPath, histogram, Journey, pipelineStages, summarizeMs } from './stages';

const journey = (over: Partial<Journey> = {}): Journey => ({
  published: 1000,
  applied: 1006,
  committed: 1008,
  relayed: 1020,
  fannedOut: 1009,
  fanOutCommitted: 1010.5,
  claimed: 1012,
  firstByte: 1014.5,
  ...over,
});

describe('pipelineStages', () => {
  it('measures each named stage from the stamps, the relay as a branch (negative when the claim came first)', () => {
    const stages = pipelineStages([journey()]);
    expect(stages.map((s) => s.ms)).toEqual([[6], [14], [-8], [2.5]]);
  });

  it('leaves out a journey lacking a stamp from the stages that need it', () => {
    const stages = pipelineStages([journey({ relayed: null }), journey({ claimed: null })]);
    expect(stages.map((s) => s.ms.length)).toEqual([2, 1, 0, 1]);
  });
});

describe('criticalPath', () => {
  it('splits each journey into stages that add up to publish → first byte', () => {
    const stages = criticalPath([journey(), journey({ firstByte: 1100 })]);
    expect(stages.map((s) => s.ms)).toEqual([[6, 6], [2, 2], [1, 1], [1.5, 1.5], [1.5, 1.5], [2.5, 88]]);
    for (let i = 0; i < 2; i += 1) expect(stages.reduce((sum, s) => sum + s.ms[i], 0)).toBe([14.5, 100][i]);
  });

  it('leaves out journeys lacking a stamp', () => {
    const lacking = [journey({ claimed: null }), journey({ committed: null }), journey({ fanOutCommitted: null })];
    expect(criticalPath(lacking).every((s) => s.ms.length === 0)).toBe(true);
  });
});

describe('summarizeMs', () => {
  it('gives nearest-rank percentiles and the maximum', () => {
    const samples = Array.from({ length: 100 }, (_, i) => 100 - i);
    expect(summarizeMs(samples)).toEqual({ n: 100, p50: 50, p90: 90, p99: 99, max: 100 });
  });

  it('is NaN for no samples', () => {
    const s = summarizeMs([]);
    expect([s.n, s.p50, s.max]).toEqual([0, NaN, NaN]);
  });
});

describe('histogram', () => {
  it('prints the buckets from the first to the last non-empty one, bars scaled to the fullest', () => {
    const lines = histogram([3, 4, 4.9, 7, 30, 30], 10);
    expect(lines).toEqual([
      '   < 5 ms | ##########      3 ( 50.0 %)',
      '  < 10 ms | ###             1 ( 16.7 %)',
      '  < 20 ms |                 0 (  0.0 %)',
      '  < 50 ms | #######         2 ( 33.3 %)',
    ]);
  });

  it('puts what reaches the last bound in an open bucket', () => {
    expect(histogram([6000], 4)).toEqual(['    ≥ 5 s | ####      1 (100.0 %)']);
  });

  it('is empty for no samples', () => {
    expect(histogram([])).toEqual([]);
  });
});
