import { applyDecorators } from '@nestjs/common';
import { Transform, TransformFnParams } from 'class-transformer';
import {
  IsIn,
  IsOptional,
  IsString,
  Matches,
  MaxLength,
  MinLength,
  ValidateBy,
  ValidationArguments,
} from 'class-validator';

/**
 * Query-parameter rules shared by the auction and bid DTOs. Each rule gives one message per bad
 * parameter (the error body's `details`), and accepts both the raw query-string form (the gateway)
 * and the converted form (the query service validating the same DTO on consume).
 */

/** "42" → 42; anything else is left as it is, so the integer rule reports it. */
export function toIntegerParam({ value }: TransformFnParams): unknown {
  return typeof value === 'string' && /^[+-]?\d{1,16}$/.test(value) ? Number(value) : value;
}

/** Surrounding whitespace removed (keyword). */
export function toTrimmed({ value }: TransformFnParams): unknown {
  return typeof value === 'string' ? value.trim() : value;
}

/**
 * An integer from `min` to `max`, one message. Optional unless `required`.
 */
export function IntegerParam(min: number, max: number): PropertyDecorator {
  return applyDecorators(
    IsOptional(),
    Transform(toIntegerParam),
    ValidateBy({
      name: 'integerInRange',
      constraints: [min, max],
      validator: {
        validate: (value: unknown) =>
          typeof value === 'number' && Number.isInteger(value) && value >= min && value <= max,
        defaultMessage: (args?: ValidationArguments) =>
          `${args?.property ?? 'value'} must be an integer from ${min} to ${max}`,
      },
    }),
  );
}

/** PostgreSQL text cannot hold NUL: such input is a 400, never a query. */
const NO_NUL = /^[^\u0000]*$/;

/** A non-empty string of at most `maxLength` characters, without NUL characters. */
export function TextParam(maxLength: number, options: { trim?: boolean } = {}): PropertyDecorator {
  const decorators = [
    IsOptional(),
    IsString({ message: ({ property }) => `${property} must be a single string value` }),
    MinLength(1, { message: ({ property }) => `${property} must not be empty` }),
    MaxLength(maxLength, { message: ({ property }) => `${property} must be at most ${maxLength} characters long` }),
    Matches(NO_NUL, { message: ({ property }) => `${property} must not contain NUL characters` }),
  ];
  if (options.trim) decorators.unshift(Transform(toTrimmed));
  return applyDecorators(...decorators);
}

/** Characters of the shortest keyword part the indexes can look up (trigrams, description tokens). */
export const KEYWORD_MIN_PART = 3;

/**
 * A keyword of several words: its token lookups only narrow the candidates, each of which is then
 * tested (up to every description). The query service runs such statements one at a time, and
 * the gateway lets each account have one of them in flight.
 */
export function isSeveralWordKeyword(keyword: string | undefined): boolean {
  return keyword !== undefined && keyword.includes(' ');
}

/** Whether some space-separated part of `keyword` has KEYWORD_MIN_PART characters or more. */
export function hasIndexablePart(keyword: string): boolean {
  return keyword.split(' ').some((part) => [...part].length >= KEYWORD_MIN_PART);
}

export const KEYWORD_TOO_SHORT =
  `keyword must contain at least one word part of ${KEYWORD_MIN_PART} or more characters (parts are separated by ` +
  `spaces: "M3 coupe" and "911" are fine, "M3" and "a b" are not): shorter keywords cannot be looked up through an index`;

/**
 * `keyword`: a TextParam (trimmed, 1–100 characters) that some index can serve — a part of 3+
 * characters (docs/adr/0004-description-keyword-tokens.md). Shorter keywords would be tested
 * against every row: 400.
 */
export function KeywordParam(maxLength: number): PropertyDecorator {
  return applyDecorators(
    TextParam(maxLength, { trim: true }),
    ValidateBy({
      name: 'indexableKeyword',
      validator: {
        // Other kinds and lengths are the TextParam rules' to report, once.
        validate: (value: unknown) =>
          typeof value !== 'string' || value.length === 0 || value.length > maxLength || hasIndexablePart(value),
        defaultMessage: () => KEYWORD_TOO_SHORT,
      },
    }),
  );
}

/**
 * A required name parameter (`make` of /stats and /models): one clear message per problem, like
 * the optional text parameters.
 */
export function RequiredNameParam(maxLength: number, hint: string): PropertyDecorator {
  return ValidateBy({
    name: 'requiredName',
    validator: {
      validate: (value: unknown) =>
        typeof value === 'string' && value.length >= 1 && value.length <= maxLength && NO_NUL.test(value),
      defaultMessage: (args?: ValidationArguments) => {
        const value: unknown = args?.value;
        const name = args?.property ?? 'value';
        if (value === undefined || value === null) return `${name} is required: ${hint}`;
        if (typeof value !== 'string') return `${name} must be a single string value`;
        if (value.length === 0) return `${name} must not be empty`;
        if (!NO_NUL.test(value)) return `${name} must not contain NUL characters`;
        return `${name} must be at most ${maxLength} characters long`;
      },
    },
  });
}

/** One of `values` (case-sensitive, as documented). */
export function EnumParam(values: readonly string[], hint?: string): PropertyDecorator {
  return applyDecorators(
    IsOptional(),
    IsIn(values as string[], {
      message: ({ property }) =>
        `${property} must be one of: ${values.join(', ')}${hint ? ` (${hint})` : ''}`,
    }),
  );
}

const DATE_TIME =
  /^(\d{4})-(\d{2})-(\d{2})(?:T(\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2}))?$/;

/**
 * An RFC 3339 date-time with an explicit offset (`2026-01-31T18:00:00Z`, `…+01:00`), or a date
 * (`2026-01-31`, meaning 00:00 UTC). A date-time without an offset is rejected: it is ambiguous.
 * A `+` that arrived decoded as a space (unencoded in the URL) is restored.
 */
export function parseDateTimeParam(value: string): Date | null {
  const match = DATE_TIME.exec(value);
  if (!match) return null;
  const [, y, mo, d, h, mi, s, offset] = match;
  const year = Number(y);
  const month = Number(mo);
  const day = Number(d);
  if (month < 1 || month > 12 || day < 1 || day > new Date(Date.UTC(year, month, 0)).getUTCDate()) return null;
  if (h !== undefined && (Number(h) > 23 || Number(mi) > 59 || (s !== undefined && Number(s) > 59))) return null;
  if (offset && offset !== 'Z' && (Number(offset.slice(1, 3)) > 23 || Number(offset.slice(4, 6)) > 59)) return null;
  const time = Date.parse(h === undefined ? `${y}-${mo}-${d}T00:00:00Z` : value);
  return Number.isNaN(time) ? null : new Date(time);
}

function toDateTimeParam({ value }: TransformFnParams): unknown {
  // "2026-01-31T18:00:00 01:00": an unencoded "+" decoded by the query-string parser.
  return typeof value === 'string' ? value.replace(/^(\S+T[\d:.]+) (\d{2}:\d{2})$/, '$1+$2') : value;
}

export function DateTimeParam(): PropertyDecorator {
  return applyDecorators(
    IsOptional(),
    Transform(toDateTimeParam),
    ValidateBy({
      name: 'dateTime',
      validator: {
        validate: (value: unknown) => typeof value === 'string' && parseDateTimeParam(value) !== null,
        defaultMessage: (args?: ValidationArguments) =>
          `${args?.property ?? 'value'} must be an ISO 8601 date-time with offset (e.g. 2026-01-31T18:00:00Z) or a date (YYYY-MM-DD)`,
      },
    }),
  );
}

function comparable(value: unknown): number | null {
  if (typeof value === 'number' && Number.isFinite(value)) return value;
  if (typeof value === 'string') return parseDateTimeParam(value)?.getTime() ?? null;
  return null;
}

/**
 * The lower bound of a range must not exceed its upper bound (`year_min` vs `year_max`…). Reported
 * on the lower bound; skipped when either side is missing or itself invalid.
 */
export function NotGreaterThan(upperProperty: string): PropertyDecorator {
  return ValidateBy({
    name: 'notGreaterThan',
    constraints: [upperProperty],
    validator: {
      validate: (value: unknown, args?: ValidationArguments) => {
        const upper = comparable((args?.object as Record<string, unknown> | undefined)?.[upperProperty]);
        const lower = comparable(value);
        return upper === null || lower === null || lower <= upper;
      },
      defaultMessage: (args?: ValidationArguments) =>
        `${args?.property ?? 'value'} must not be greater than ${upperProperty}`,
    },
  });
}

/** Valid only when at least one of `others` is given too. */
export function RequiresOneOf(others: readonly string[], message: string): PropertyDecorator {
  return ValidateBy({
    name: 'requiresOneOf',
    constraints: [others],
    validator: {
      validate: (_value: unknown, args?: ValidationArguments) => {
        const object = (args?.object ?? {}) as Record<string, unknown>;
        return others.some((name) => object[name] !== undefined);
      },
      defaultMessage: () => message,
    },
  });
}

/** Valid only when `property` is not given at all. */
export function Absent(property: string, message: string): PropertyDecorator {
  return ValidateBy({
    name: 'absent',
    constraints: [property],
    validator: {
      validate: (_value: unknown, args?: ValidationArguments) =>
        ((args?.object ?? {}) as Record<string, unknown>)[property] === undefined,
      defaultMessage: () => message,
    },
  });
}

/** Valid only when `property` does not have the value `forbidden`. */
export function NotWith(property: string, forbidden: string, message: string): PropertyDecorator {
  return ValidateBy({
    name: 'notWith',
    constraints: [property, forbidden],
    validator: {
      validate: (_value: unknown, args?: ValidationArguments) =>
        ((args?.object ?? {}) as Record<string, unknown>)[property] !== forbidden,
      defaultMessage: () => message,
    },
  });
}
