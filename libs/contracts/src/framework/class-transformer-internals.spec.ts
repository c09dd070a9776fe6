import 'reflect-metadata';
import { plainToInstance, Transform, TransformationType } from 'class-transformer';
import { plainToClassTransforms } from './class-transformer-internals';

/**
 * The registry this adapter reads is class-transformer's private storage: these checks fail the
 * day an upgrade moves it, renames its lookup or changes what the lookup returns, instead of the
 * compiled validators silently losing their transforms.
 */

class Base {
  @Transform(({ value }) => (typeof value === 'string' ? value.trim() : value))
  name?: unknown;
}

class Query extends Base {
  @Transform(({ value }) => Number(value), { toClassOnly: true })
  @Transform(({ value }) => `plain:${String(value)}`, { toPlainOnly: true })
  year?: unknown;

  @Transform(({ value }) => String(value).toUpperCase())
  @Transform(({ value }) => `${String(value)}!`)
  tag?: unknown;

  plain?: unknown;
}

function applied(cls: new () => object, property: string, value: unknown, obj: Record<string, unknown>): unknown {
  return plainToClassTransforms(cls, property).reduce<unknown>(
    (current, transform) => transform({ value: current, key: property, obj, type: TransformationType.PLAIN_TO_CLASS, options: {} }),
    value,
  );
}

describe('class-transformer internals', () => {
  it('reads the registry from the module path the installed package has', () => {
    expect(() => require.resolve('class-transformer/cjs/storage')).not.toThrow();
  });

  it('finds the plain-to-class transforms of a property, its base class’s included, toPlainOnly left out', () => {
    expect(plainToClassTransforms(Query, 'year')).toHaveLength(1);
    expect(plainToClassTransforms(Query, 'name')).toHaveLength(1);
    expect(plainToClassTransforms(Query, 'tag')).toHaveLength(2);
    expect(plainToClassTransforms(Query, 'plain')).toEqual([]);
  });

  it('gives the functions plainToInstance applies, in its order, with the same results', () => {
    const plain = { name: '  911 ', year: '1967', tag: 'rs', plain: 'as is' };
    const instance = plainToInstance(Query, plain) as Record<string, unknown>;
    for (const property of Object.keys(plain)) {
      expect(applied(Query, property, plain[property as keyof typeof plain], plain)).toEqual(instance[property]);
    }
    expect(instance).toEqual({ name: '911', year: 1967, tag: 'RS!', plain: 'as is' });
  });
});
