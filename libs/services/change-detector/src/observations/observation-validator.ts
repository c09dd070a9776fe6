import { Observation, OBSERVATION_JSON_SCHEMA, ObservationDto, validatePlain } from '@cars/contracts';
import Ajv from 'ajv';

/**
 * Observation validation at ingestion speed: the contract's JSON Schema compiled with ajv
 * (microseconds) accepts; anything it refuses goes through ObservationDto (class-validator, the
 * reference) for the reasons, and the DTO's verdict is final.
 */
const ajv = new Ajv({ allErrors: false, strict: false });
const fastCheck = ajv.compile(OBSERVATION_JSON_SCHEMA);

export function parseObservation(value: unknown): { ok: true; value: Observation } | { ok: false; reason: string } {
  if (fastCheck(value)) return { ok: true, value: value as Observation };
  const outcome = validatePlain(ObservationDto, value);
  if (outcome.ok) return { ok: true, value: outcome.value };
  const reason = Object.entries(outcome.details)
    .map(([field, messages]) => `${field}: ${messages.join('; ')}`)
    .join(' | ');
  return { ok: false, reason: `invalid observation: ${reason}` };
}
