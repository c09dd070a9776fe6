import { backoffDelay } from './backoff';

describe('backoffDelay', () => {
  it('doubles from the base after each failure, up to the cap', () => {
    const delays = [0, 1, 2, 3, 4, 5, 6, 7, 40].map((failures) => backoffDelay(failures, { baseMs: 250, maxMs: 30_000 }));
    expect(delays).toEqual([0, 250, 500, 1000, 2000, 4000, 8000, 16_000, 30_000]);
  });
});
