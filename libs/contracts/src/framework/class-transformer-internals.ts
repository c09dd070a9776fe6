import { TransformationType, TransformFnParams } from 'class-transformer';

/**
 * The one place this repository reaches inside class-transformer (0.5): its registry of
 * `@Transform` functions, which `plainToInstance` applies but the package's index does not export.
 * The compiled validators (compiled-validation.ts) call those functions directly. When an upgrade
 * moves or reshapes the registry, class-transformer-internals.spec.ts fails: it checks the module
 * path, the method and its answers against what `plainToInstance` does with the same class.
 */

/** A `@Transform` function, as class-transformer calls it. */
export type TransformFn = (params: TransformFnParams) => unknown;

interface TransformRegistry {
  findTransformMetadatas(target: object, propertyName: string, transformationType: TransformationType): { transformFn: TransformFn }[];
}

// eslint-disable-next-line @typescript-eslint/no-require-imports
const registry = (require('class-transformer/cjs/storage') as { defaultMetadataStorage: TransformRegistry }).defaultMetadataStorage;

/**
 * The `@Transform` functions `plainToInstance(cls, …)` applies to `property`, in the order it
 * applies them (those of base classes included; `toPlainOnly` ones left out).
 */
export function plainToClassTransforms(cls: new () => object, property: string): TransformFn[] {
  return registry.findTransformMetadatas(cls, property, TransformationType.PLAIN_TO_CLASS).map((metadata) => metadata.transformFn);
}
