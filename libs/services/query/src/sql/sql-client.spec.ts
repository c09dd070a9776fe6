import { localSettings } from './sql-client';

describe('planner settings', () => {
  it('are SET LOCAL assignments of the transaction that runs the statement', () => {
    expect(localSettings({ enable_seqscan: 'off', work_mem: '64MB' })).toEqual(["enable_seqscan = 'off'", "work_mem = '64MB'"]);
  });

  it('refuse anything but plain names and values', () => {
    expect(() => localSettings({ "x'; DROP TABLE auctions; --": 'on' })).toThrow();
    expect(() => localSettings({ work_mem: "1'; --" })).toThrow();
    expect(() => localSettings({ jit: 'off; RESET ALL' })).toThrow();
  });
});
