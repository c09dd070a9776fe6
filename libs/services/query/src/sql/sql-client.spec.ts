import { beginWith } from './sql-client';

describe('planner settings', () => {
  it('are set locally in the transaction that runs the statement', () => {
    expect(beginWith({ enable_seqscan: 'off', work_mem: '64MB' })).toBe(
      "BEGIN; SELECT set_config('enable_seqscan', 'off', true), set_config('work_mem', '64MB', true)",
    );
  });

  it('refuse anything but plain names and values', () => {
    expect(() => beginWith({ "x'; DROP TABLE auctions; --": 'on' })).toThrow();
    expect(() => beginWith({ work_mem: "1'; --" })).toThrow();
  });
});
