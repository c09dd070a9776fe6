import { parseRecoverWindow } from './recover-window';

describe('recover window', () => {
  const now = new Date('2026-11-25T12:00:00Z');

  it('takes since and until, until defaulting to now', () => {
    expect(parseRecoverWindow({ since: '2026-11-20T00:00:00Z', until: '2026-11-21T00:00:00+01:00' }, now)).toEqual({
      ok: true,
      since: new Date('2026-11-20T00:00:00Z'),
      until: new Date('2026-11-20T23:00:00Z'),
    });
    expect(parseRecoverWindow({ since: '2026-11-24' }, now)).toEqual({ ok: true, since: new Date('2026-11-24T00:00:00Z'), until: now });
  });

  it.each([
    ['no since', {}, ['since']],
    ['a since without offset', { since: '2026-11-20T00:00:00' }, ['since']],
    ['since after until', { since: '2026-11-22T00:00:00Z', until: '2026-11-21T00:00:00Z' }, ['since']],
    ['more than 14 days', { since: '2026-11-01T00:00:00Z', until: '2026-11-16T00:00:01Z' }, ['until']],
    ['an unknown member', { since: '2026-11-24T00:00:00Z', status: 'failed' }, ['status']],
    ['a number', { since: 1732406400 }, ['since']],
  ])('refuses %s, naming the member', (_case, body, members) => {
    const outcome = parseRecoverWindow(body, now);
    expect(outcome.ok).toBe(false);
    if (!outcome.ok) expect(Object.keys(outcome.details).sort()).toEqual(members);
  });

  it('refuses a body that is not an object', () => {
    expect(parseRecoverWindow([], now)).toMatchObject({ ok: false, details: { body: [expect.any(String)] } });
  });
});
