import { ClassConstructor, plainToInstance } from 'class-transformer';
import { ValidationError, validateSync } from 'class-validator';
import { compiledValidatorFor } from './compiled-validation';

/** class-validator errors → SPEC.md `details`: parameter name → messages. */
export function toValidationDetails(errors: ValidationError[], parent = ''): Record<string, string[]> {
  const details: Record<string, string[]> = {};
  for (const error of errors) {
    const name = parent ? `${parent}.${error.property}` : error.property;
    const constraints = error.constraints ?? {};
    const messages = Object.entries(constraints).map(([rule, message]) =>
      rule === 'whitelistValidation' ? `${name} is not a recognised parameter` : message,
    );
    if (messages.length > 0) details[name] = messages;
    if (error.children?.length) Object.assign(details, toValidationDetails(error.children, name));
  }
  return details;
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
