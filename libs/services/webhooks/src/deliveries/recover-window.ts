import { parseDateTimeParam, unrecognised } from '@cars/contracts';

/** The longest window one recover request covers. */
export const RECOVER_MAX_DAYS = 14;

export type RecoverWindow = { ok: true; since: Date; until: Date } | { ok: false; details: Record<string, string[]> };

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * POST /webhooks/{id}/recover: `{since, until?}`, RFC 3339 date-times with an offset (or dates,
 * meaning 00:00 UTC); `until` defaults to now; `since` before `until`, at most 14 days apart.
 */
export function parseRecoverWindow(body: unknown, now: Date): RecoverWindow {
  if (!isObject(body)) return { ok: false, details: { body: ['the body must be a JSON object such as {"since": "2026-11-20T00:00:00Z"}'] } };
  // Members are the client's keys (`__proto__`…): defined as own properties, never assigned.
  const details: Record<string, string[]> = Object.fromEntries(
    Object.keys(body).filter((member) => member !== 'since' && member !== 'until').map((member) => [member, [unrecognised(member, 'field')]]),
  );
  const instant = (member: 'since' | 'until'): Date | null | undefined => {
    const value = body[member];
    if (value === undefined) return undefined;
    const parsed = typeof value === 'string' ? parseDateTimeParam(value) : null;
    if (!parsed) details[member] = [`${member} must be a date-time with an offset, e.g. 2026-11-20T00:00:00Z`];
    return parsed;
  };
  const since = instant('since');
  const until = instant('until') ?? now;
  if (body.since === undefined) details.since = ['since is required: the start of the window of failed deliveries to send again'];
  if (since && until && !details.until) {
    if (since.getTime() >= until.getTime()) details.since = ['since must be before until'];
    else if (until.getTime() - since.getTime() > RECOVER_MAX_DAYS * 86_400_000) {
      details.until = [`the window must be at most ${RECOVER_MAX_DAYS} days long`];
    }
  }
  return Object.keys(details).length === 0 && since ? { ok: true, since, until: until! } : { ok: false, details };
}
