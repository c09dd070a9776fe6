import { describeLogMessage } from './logger';

describe('describeLogMessage', () => {
  it("tells what a RabbitMQ disconnect event says instead of '[object Object]'", () => {
    const event = { err: Object.assign(new Error('Socket closed abruptly during opening handshake'), { code: 'ECONNRESET' }) };
    expect(describeLogMessage(event)).toBe('Socket closed abruptly during opening handshake');
    expect(describeLogMessage({ reason: 'shutdown', code: 320 })).toBe('{"reason":"shutdown","code":320}');
    expect(describeLogMessage(new Error('boom'))).toBe('boom');
    expect(describeLogMessage('plain')).toBe('plain');
    expect(describeLogMessage(42)).toBe('42');
  });
});
