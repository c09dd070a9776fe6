import { boundedErrorBody, unrecognised, validationError } from './errors';

describe('error bodies stay bounded, whatever the input', () => {
  it('names at most ten parameters in the message, each cut to 64 characters', () => {
    const details = Object.fromEntries(Array.from({ length: 30 }, (_, i) => [`${'p'.repeat(100)}${i}`, ['bad']]));
    const { message } = validationError(details);
    expect(message.startsWith(`Invalid parameters: ${'p'.repeat(63)}…, `)).toBe(true);
    expect(message.endsWith(' and 20 more')).toBe(true);
    expect(message.length).toBeLessThan(800);
  });

  it('keeps 20 detail entries, 5 messages each, names of 64 and messages of 300 characters', () => {
    const details = Object.fromEntries(Array.from({ length: 500 }, (_, i) => [`${i}${'k'.repeat(200)}`, Array.from({ length: 9 }, () => 'm'.repeat(1000))]));
    const body = boundedErrorBody({ error: 'Validation Error', message: 'x'.repeat(5000), details });
    expect(body.message).toHaveLength(300);
    const entries = Object.entries(body.details!);
    expect(entries).toHaveLength(20);
    for (const [name, messages] of entries) {
      expect(name).toHaveLength(64);
      expect(messages).toHaveLength(5);
      for (const m of messages) expect(m).toHaveLength(300);
    }
  });

  it('leaves an ordinary body as it is', () => {
    const body = validationError({ limit: ['limit must be an integer from 1 to 100'] });
    expect(boundedErrorBody(body)).toEqual(body);
    expect(boundedErrorBody({ error: 'Not Found', message: 'No route GET /x' })).toEqual({ error: 'Not Found', message: 'No route GET /x' });
  });

  it('names an unknown member cut short', () => {
    expect(unrecognised('colour', 'parameter')).toBe('colour is not a recognised parameter');
    expect(unrecognised('z'.repeat(1000), 'field')).toBe(`${'z'.repeat(63)}… is not a recognised field`);
  });
});
