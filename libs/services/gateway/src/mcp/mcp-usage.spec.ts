import { EventEmitter } from 'node:events';
import type { ServerResponse } from 'node:http';
import { MeterTicket, UsageMeter } from '../metering/usage-meter';
import { McpRequestUsage } from './mcp-usage';

function ticket(remaining: number): MeterTicket {
  return {
    reservation: { accountId: 'a1', units: 1 } as MeterTicket['reservation'],
    limit: 1000,
    remaining,
    periodEnd: new Date('2026-12-01T00:00:00Z'),
    settled: false,
  };
}

class FakeResponse extends EventEmitter {
  destroyed = false;
  headersSent = false;
  writableFinished = false;
  readonly headers: Record<string, string> = {};
  setHeader(name: string, value: string): void {
    this.headers[name] = value;
  }
}

describe('McpRequestUsage', () => {
  let meter: { settle: jest.Mock };
  let response: FakeResponse;
  let usage: McpRequestUsage;

  beforeEach(() => {
    meter = { settle: jest.fn() };
    response = new FakeResponse();
    usage = new McpRequestUsage(meter as unknown as UsageMeter, response as unknown as ServerResponse);
  });

  it('commits the units of counted outcomes once the response is delivered, releases the others', () => {
    const ok = ticket(9);
    const notFound = ticket(8);
    const unavailable = ticket(7);
    usage.settle(ok, 200);
    usage.settle(notFound, 404);
    usage.settle(unavailable, 503);
    expect(meter.settle).not.toHaveBeenCalled();
    response.writableFinished = true;
    response.emit('close');
    expect(meter.settle.mock.calls).toEqual([
      [ok, true],
      [notFound, true],
      [unavailable, false],
    ]);
  });

  it('releases every unit when the client went away before the response was delivered', () => {
    const held = ticket(9);
    usage.settle(held, 200);
    response.emit('close');
    expect(meter.settle).toHaveBeenCalledWith(held, false);
    const late = ticket(8);
    usage.settle(late, 200);
    expect(meter.settle).toHaveBeenLastCalledWith(late, false);
  });

  it('sets the X-RateLimit headers of the last call while they can still be sent', () => {
    usage.settle(ticket(9), 200);
    expect(response.headers['x-ratelimit-remaining']).toBe('9');
    usage.settle(ticket(8), 503);
    expect(response.headers).toEqual({ 'x-ratelimit-limit': '1000', 'x-ratelimit-remaining': '9', 'x-ratelimit-reset': '1796083200' });
    response.headersSent = true;
    usage.settle(ticket(7), 200);
    expect(response.headers['x-ratelimit-remaining']).toBe('9');
  });
});
