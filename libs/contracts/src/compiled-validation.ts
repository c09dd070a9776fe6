import { TransformationType } from 'class-transformer';
import { getMetadataStorage, MetadataStorage, ValidationArguments, ValidationTypes } from 'class-validator';
import { plainToClassTransforms, TransformFn } from './framework/class-transformer-internals';

/**
 * The accepting half of validation, compiled once per DTO class from the DTO's own
 * class-validator and class-transformer metadata: the same @Transform functions and the same
 * validator functions, called directly, without class-validator's per-call metadata lookups,
 * grouping and error objects (profiled at ~10 % of the gateway's CPU per request, and ~75 µs of
 * the query service's per consumed request; docs/performance.md).
 *
 * It only ever says "valid, here is the DTO instance" or "don't know": anything else (a value of
 * a kind it does not take, an unknown member, a rule that fails, a kind of metadata it does not
 * model) goes to class-validator — the gateway's validation pipe, `validatePlain` — so every 400
 * and its `details` come from class-validator exactly as before. The spec checks that both agree
 * on a corpus of valid and invalid query strings and message payloads.
 */

/** class-validator's records of a rule and of a validator class (its index exports the storage, not their types). */
type ValidationMetadata = ReturnType<MetadataStorage['getTargetValidationMetadatas']>[number];
type ConstraintMetadata = ReturnType<MetadataStorage['getTargetValidatorConstraints']>[number];

interface PropertyPlan {
  name: string;
  transforms: TransformFn[];
  conditions: ValidationMetadata[];
  validators: { metadata: ValidationMetadata; constraints: ConstraintMetadata[] }[];
}

export type CompiledValidator<T extends object> = (plain: unknown) => T | undefined;

/**
 * The values a compiled validator takes: `strings` for a query string or path parameters (one
 * plain string each; repeated parameters are arrays and left to class-validator), `scalars` for a
 * message payload (a DTO that went through JSON: strings, numbers, booleans). Objects, arrays and
 * nulls are always left to class-validator.
 */
export type CompiledInput = 'strings' | 'scalars';

const NO_OPTIONS = {};

/** The compiled validator of `cls`, or null when its metadata uses something this does not model. */
export function compileValidator<T extends object>(cls: new () => T, input: CompiledInput = 'strings'): CompiledValidator<T> | null {
  const storage = getMetadataStorage();
  const metadatas = storage.getTargetValidationMetadatas(cls, '', false, false, undefined);
  if (metadatas.length === 0) return null;
  const plans = new Map<string, PropertyPlan>();
  for (const metadata of metadatas) {
    if (metadata.groups?.length || metadata.always || metadata.each) return null;
    let plan = plans.get(metadata.propertyName);
    if (!plan) {
      const transforms = plainToClassTransforms(cls, metadata.propertyName);
      plan = { name: metadata.propertyName, transforms, conditions: [], validators: [] };
      plans.set(metadata.propertyName, plan);
    }
    if (metadata.type === ValidationTypes.CONDITIONAL_VALIDATION) {
      plan.conditions.push(metadata);
    } else if (metadata.type === ValidationTypes.CUSTOM_VALIDATION) {
      const constraints = storage.getTargetValidatorConstraints(metadata.constraintCls);
      if (constraints.length === 0 || constraints.some((c) => c.async)) return null;
      plan.validators.push({ metadata, constraints });
    } else {
      return null; // nested, promise, is-defined, whitelist-only…: class-validator's business
    }
  }
  const properties = [...plans.values()];
  const takes =
    input === 'strings'
      ? (value: unknown) => typeof value === 'string'
      : (value: unknown) => typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean';

  return (plain: unknown): T | undefined => {
    if (plain === null || typeof plain !== 'object' || Array.isArray(plain)) return undefined;
    const input = plain as Record<string, unknown>;
    const instance = new cls() as Record<string, unknown>;
    for (const key of Object.keys(input)) {
      const plan = plans.get(key);
      let value = input[key];
      if (!plan || !takes(value)) return undefined;
      for (const transform of plan.transforms) {
        value = transform({ value, key, obj: input, type: TransformationType.PLAIN_TO_CLASS, options: NO_OPTIONS });
      }
      instance[key] = value;
    }
    for (const plan of properties) {
      const value = instance[plan.name];
      if (!plan.conditions.every((c) => (c.constraints[0] as (object: object, value: unknown) => boolean)(instance, value))) continue;
      for (const { metadata, constraints } of plan.validators) {
        if (metadata.validateIf && !metadata.validateIf(instance, value)) continue;
        const args: ValidationArguments = {
          targetName: cls.name,
          property: plan.name,
          object: instance,
          value,
          constraints: metadata.constraints,
        };
        for (const constraint of constraints) {
          if ((constraint.instance as { validate(value: unknown, args: ValidationArguments): unknown }).validate(value, args) !== true) {
            return undefined;
          }
        }
      }
    }
    return instance as T;
  };
}

/** Compiled validators made so far, by input kind and class (null: the class has none). */
const compiled: Record<CompiledInput, Map<new () => object, CompiledValidator<object> | null>> = { strings: new Map(), scalars: new Map() };

/** The compiled validator of `cls` for `input`, made once on first use (null when it has none). */
export function compiledValidatorFor<T extends object>(cls: new () => T, input: CompiledInput): CompiledValidator<T> | null {
  const made = compiled[input];
  let validator = made.get(cls);
  if (validator === undefined) {
    validator = compileValidator(cls, input) as CompiledValidator<object> | null;
    made.set(cls, validator);
  }
  return validator as CompiledValidator<T> | null;
}
