import { ClassConstructor, plainToInstance } from 'class-transformer';
import { ValidationError, validateSync } from 'class-validator';
import { compiledValidatorFor } from './compiled-validation';
import { unrecognised } from './errors';

/** class-validator errors → the error body's `details`: parameter name → messages. */
export function toValidationDetails(errors: ValidationError[]): Record<string, string[]> {
  // Names are the client's keys (`__proto__`…): collected in a Map, then defined as own properties.
  const details = new Map<string, string[]>();
  const collect = (list: ValidationError[], parent: string) => {
    for (const error of list) {
      const name = parent ? `${parent}.${error.property}` : error.property;
      const constraints = error.constraints ?? {};
      const messages = Object.entries(constraints).map(([rule, message]) =>
        rule === 'whitelistValidation' ? unrecognised(name, 'parameter') : message,
      );
      if (messages.length > 0) details.set(name, messages);
      if (error.children?.length) collect(error.children, name);
    }
  };
  collect(errors, '');
  return Object.fromEntries(details);
}

export type ValidationOutcome<T> = { ok: true; value: T } | { ok: false; details: Record<string, string[]> };

/**
 * Validates a plain object (query string, message payload) against a DTO class: unknown members
 * are errors, values are converted by the DTO's own @Type/@Transform rules only.
 */
export function validatePlain<T extends object>(cls: ClassConstructor<T>, plain: unknown): ValidationOutcome<T> {
  if (plain === null || typeof plain !== 'object' || Array.isArray(plain)) {
    return { ok: false, details: { body: ['must be an object'] } };
  }
  const accepted = compiledValidatorFor(cls as new () => T, 'scalars')?.(plain);
  if (accepted !== undefined) return { ok: true, value: accepted };
  const value = plainToInstance(cls, plain);
  const errors = validateSync(value, { whitelist: true, forbidNonWhitelisted: true, forbidUnknownValues: true });
  return errors.length === 0 ? { ok: true, value } : { ok: false, details: toValidationDetails(errors) };
}
