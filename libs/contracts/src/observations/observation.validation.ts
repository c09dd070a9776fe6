import Ajv, { ErrorObject, ValidateFunction } from 'ajv';
import { Observation, OBSERVATION_JSON_SCHEMA, OBSERVATION_MESSAGE_KEYWORD } from './observation.schema';

/** The outcome of `validateObservation`: the observation, or its problems by field (`auction.year`, `bids.0.amount`). */
export type ObservationValidation = { ok: true; value: Observation } | { ok: false; details: Record<string, string[]> };

/** The name given to the observation itself when it is not an object. */
const ROOT = 'body';

let compiled: ((value: unknown) => ObservationValidation) | undefined;

/**
 * The contract's schema compiled with ajv (a one-off cost of some milliseconds, paid on the first
 * call; a service calls it at start-up), then microseconds per observation.
 */
export function observationValidator(): (value: unknown) => ObservationValidation {
  if (!compiled) {
    // allErrors: every offending member is reported; verbose: errors carry their schema (for `x-message`).
    const ajv = new Ajv({ allErrors: true, verbose: true, strict: true });
    ajv.addKeyword({ keyword: OBSERVATION_MESSAGE_KEYWORD, schemaType: 'string' });
    const validate: ValidateFunction<Observation> = ajv.compile<Observation>(OBSERVATION_JSON_SCHEMA);
    compiled = (value) =>
      validate(value) ? { ok: true, value } : { ok: false, details: observationErrorDetails(validate.errors ?? []) };
  }
  return compiled;
}

/**
 * Validates a parsed message body against the observation contract (`OBSERVATION_JSON_SCHEMA`):
 * the observation itself (not a copy), or the problems of each offending field.
 */
export function validateObservation(value: unknown): ObservationValidation {
  return observationValidator()(value);
}

/** ajv errors → problems by field, in the order of the schema, each field once. */
export function observationErrorDetails(errors: readonly ErrorObject[]): Record<string, string[]> {
  // A Map: field names come from the message (`constructor`, `__proto__` are names like any other).
  const details = new Map<string, string[]>();
  for (const error of errors) {
    const [field, message] = describe(error);
    const messages = details.get(field) ?? [];
    if (messages.length === 0) details.set(field, messages);
    if (!messages.includes(message)) messages.push(message);
  }
  return Object.fromEntries(details);
}

function describe(error: ErrorObject): [field: string, message: string] {
  const path = fieldOf(error.instancePath);
  const member = (name: unknown) => (path ? `${path}.${String(name)}` : String(name));
  const params = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case 'required':
      return [member(params.missingProperty), 'is required'];
    case 'additionalProperties':
      return [member(params.additionalProperty), 'not a recognised field'];
    case 'type':
      return [path || ROOT, `must be ${typeNames(params.type)}`];
    case 'minimum':
    case 'maximum':
      return [path, `must be ${String(params.comparison)} ${String(params.limit)}`];
    case 'minLength':
      return [path, params.limit === 1 ? 'must not be empty' : `must be at least ${String(params.limit)} characters`];
    case 'maxLength':
      return [path, `must be at most ${String(params.limit)} characters`];
    case 'maxItems':
      return [path, `must have at most ${String(params.limit)} items`];
    case 'enum':
      return [path, `must be one of ${(params.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ')}`];
    case 'pattern': {
      const message = (error.parentSchema as Record<string, unknown> | undefined)?.[OBSERVATION_MESSAGE_KEYWORD];
      return [path, typeof message === 'string' ? message : `must match ${String(params.pattern)}`];
    }
    default:
      return [path || ROOT, error.message ?? `fails ${error.keyword}`];
  }
}

/** `/bids/0/amount` (a JSON Pointer) → `bids.0.amount`. */
function fieldOf(instancePath: string): string {
  if (!instancePath) return '';
  return instancePath
    .slice(1)
    .split('/')
    .map((part) => part.replace(/~1/g, '/').replace(/~0/g, '~'))
    .join('.');
}

const TYPE_NAMES: Record<string, string> = {
  string: 'a string',
  number: 'a number',
  integer: 'an integer',
  boolean: 'a boolean',
  object: 'an object',
  array: 'an array',
  null: 'null',
};

function typeNames(type: unknown): string {
  const names = Array.isArray(type) ? type : String(type).split(',');
  return names.map((name: string) => TYPE_NAMES[name] ?? name).join(' or ');
}
