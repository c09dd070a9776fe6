import {
  AUCTION_SOURCES,
  clip,
  ERROR_BODY_BOUNDS,
  EventTypes,
  SUBSCRIBABLE_EVENT_TYPES,
  SubscribableEventType,
  unrecognised,
  WebhookFilters,
} from '@cars/contracts';

/**
 * The bodies of POST and PATCH /webhooks, checked member by member (docs/api/webhooks.md):
 * every problem is named in `details`, as the other routes' 400s do. Pure: the destination's
 * network rules (net-guard) and the plan rules come after.
 */

export const URL_MAX_LENGTH = 2048;
export const DESCRIPTION_MAX_LENGTH = 500;

export interface SubscriptionInput {
  url: string;
  description: string;
  event_types: SubscribableEventType[];
  filters: WebhookFilters;
}

export type SubscriptionPatch = Partial<SubscriptionInput> & { enabled?: boolean };

export type InputOutcome<T> = { ok: true; value: T } | { ok: false; details: Record<string, string[]> };

const CREATE_MEMBERS = ['url', 'description', 'event_types', 'filters'] as const;
const PATCH_MEMBERS = [...CREATE_MEMBERS, 'enabled'] as const;
const FILTER_MEMBERS = ['auction_id', 'make', 'source'] as const;
const POSITIVE_INTEGER = /^[1-9]\d{0,18}$/;

/** PostgreSQL text cannot hold NUL: such input is a 400, never a statement. */
const hasNul = (value: string): boolean => value.includes('\u0000');

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** Problems by member. Members are the client's own keys (`toString`, `__proto__`…): kept in a Map, never looked up on an object. */
class Details {
  private readonly members = new Map<string, string[]>();
  add(member: string, message: string): void {
    const messages = this.members.get(member);
    if (messages) messages.push(message);
    else this.members.set(member, [message]);
  }
  get count(): number {
    return this.members.size;
  }
  get empty(): boolean {
    return this.members.size === 0;
  }
  get all(): Record<string, string[]> {
    return Object.fromEntries(this.members);
  }
}

function unknownMembers(body: Record<string, unknown>, known: readonly string[], details: Details, prefix = ''): void {
  for (const member of Object.keys(body)) {
    if (!known.includes(member)) details.add(`${prefix}${member}`, unrecognised(`${prefix}${member}`, 'field'));
  }
}

function url(value: unknown, details: Details): string | undefined {
  if (typeof value !== 'string') return void details.add('url', 'url must be a string');
  if (value.length === 0) return void details.add('url', 'url must not be empty');
  if (value.length > URL_MAX_LENGTH) return void details.add('url', `url must be at most ${URL_MAX_LENGTH} characters long`);
  if (hasNul(value)) return void details.add('url', 'url must not contain NUL characters');
  try {
    new URL(value);
  } catch {
    return void details.add('url', 'url must be an absolute URL such as https://example.com/webhooks');
  }
  return value;
}

function description(value: unknown, details: Details): string | undefined {
  if (typeof value !== 'string') return void details.add('description', 'description must be a string');
  if (value.length > DESCRIPTION_MAX_LENGTH) {
    return void details.add('description', `description must be at most ${DESCRIPTION_MAX_LENGTH} characters long`);
  }
  if (hasNul(value)) return void details.add('description', 'description must not contain NUL characters');
  return value;
}

function eventTypes(value: unknown, details: Details): SubscribableEventType[] | undefined {
  if (!Array.isArray(value)) return void details.add('event_types', 'event_types must be an array of event type names');
  if (value.length === 0) return void details.add('event_types', 'event_types must not be empty');
  const seen = new Set<string>();
  let ok = true;
  for (const item of value) {
    if (typeof item !== 'string') {
      details.add('event_types', 'event_types must contain strings only');
      ok = false;
    } else if (item === EventTypes.WebhookTest) {
      details.add('event_types', 'webhook.test cannot be subscribed to: send one with POST /webhooks/{id}/test');
      ok = false;
    } else if (!(SUBSCRIBABLE_EVENT_TYPES as readonly string[]).includes(item)) {
      details.add('event_types', `unsupported event type "${clip(item, ERROR_BODY_BOUNDS.name)}" (supported: ${SUBSCRIBABLE_EVENT_TYPES.join(', ')})`);
      ok = false;
    } else if (seen.has(item)) {
      details.add('event_types', `"${clip(item, ERROR_BODY_BOUNDS.name)}" is listed twice`);
      ok = false;
    }
    if (typeof item === 'string') seen.add(item);
  }
  return ok ? (value as SubscribableEventType[]) : undefined;
}

function filters(value: unknown, details: Details): WebhookFilters | undefined {
  if (!isObject(value)) return void details.add('filters', 'filters must be an object (or {} for none)');
  const before = details.count;
  unknownMembers(value, FILTER_MEMBERS, details, 'filters.');
  const result: WebhookFilters = {};
  if (value.auction_id !== undefined) {
    if (typeof value.auction_id !== 'string' || !POSITIVE_INTEGER.test(value.auction_id)) {
      details.add('filters.auction_id', 'filters.auction_id must be a string holding a positive integer, e.g. "48213"');
    } else {
      result.auction_id = value.auction_id;
    }
  }
  if (value.make !== undefined) {
    if (typeof value.make !== 'string' || value.make.trim() === '' || value.make.length > 100 || hasNul(value.make)) {
      details.add('filters.make', 'filters.make must be a non-empty string of at most 100 characters (a make name from GET /makes)');
    } else {
      result.make = value.make;
    }
  }
  if (value.source !== undefined) {
    const known = typeof value.source === 'string' && (AUCTION_SOURCES as readonly string[]).includes(value.source.toLowerCase());
    if (!known) details.add('filters.source', `filters.source must be one of: ${AUCTION_SOURCES.join(', ')} (any case)`);
    else result.source = value.source as string;
  }
  return details.count === before ? result : undefined;
}

/** POST /webhooks: `url` and `event_types` required; `description` defaults to "", `filters` to {}. */
export function parseCreateInput(body: unknown): InputOutcome<SubscriptionInput> {
  if (!isObject(body)) return { ok: false, details: { body: ['the body must be a JSON object'] } };
  const details = new Details();
  unknownMembers(body, CREATE_MEMBERS, details);
  if (body.url === undefined) details.add('url', 'url is required');
  if (body.event_types === undefined) details.add('event_types', 'event_types is required: at least one event type');
  const value = {
    url: body.url === undefined ? undefined : url(body.url, details),
    description: body.description === undefined ? '' : description(body.description, details),
    event_types: body.event_types === undefined ? undefined : eventTypes(body.event_types, details),
    filters: body.filters === undefined ? {} : filters(body.filters, details),
  };
  return details.empty ? { ok: true, value: value as SubscriptionInput } : { ok: false, details: details.all };
}

/** PATCH /webhooks/{id}: only the members given; `filters` replaces, `{}` clears. */
export function parsePatchInput(body: unknown): InputOutcome<SubscriptionPatch> {
  if (!isObject(body)) return { ok: false, details: { body: ['the body must be a JSON object'] } };
  const details = new Details();
  unknownMembers(body, PATCH_MEMBERS, details);
  const patch: SubscriptionPatch = {};
  if (body.url !== undefined) patch.url = url(body.url, details);
  if (body.description !== undefined) patch.description = description(body.description, details);
  if (body.event_types !== undefined) patch.event_types = eventTypes(body.event_types, details);
  if (body.filters !== undefined) patch.filters = filters(body.filters, details);
  if (body.enabled !== undefined) {
    if (typeof body.enabled !== 'boolean') details.add('enabled', 'enabled must be true or false');
    else patch.enabled = body.enabled;
  }
  return details.empty ? { ok: true, value: patch } : { ok: false, details: details.all };
}

/** Filters as they behave: make and source compared case-insensitively, auction_id exactly. */
function filterBehaviour(filters: WebhookFilters): string {
  return JSON.stringify([filters.auction_id ?? null, filters.make?.toLowerCase() ?? null, filters.source?.toLowerCase() ?? null]);
}

/**
 * Whether an edit sets a new activation boundary (after it, only events observed from then on) — a
 * new URL, another *set* of event types, or filters that behave differently. Description edits,
 * reordered event types and recapitalized make/source keep it.
 */
export function changesActivation(before: SubscriptionInput, after: SubscriptionInput): boolean {
  if (before.url !== after.url) return true;
  const types = (list: readonly string[]) => [...new Set(list)].sort().join(',');
  if (types(before.event_types) !== types(after.event_types)) return true;
  return filterBehaviour(before.filters) !== filterBehaviour(after.filters);
}
