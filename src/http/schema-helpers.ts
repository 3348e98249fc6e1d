// Schema shapes TypeBox does not have built in, shared by every domain's schemas.
import { Type, type Static, type TObject, type TSchema, type TUnion } from '@sinclair/typebox';

/**
 * A `oneOf` with an OpenAPI/Ajv `discriminator`: the validator picks the branch by the tag, so an
 * error names a field of the branch the client meant, never of a sibling.
 */
export function discriminated<T extends TObject[]>(propertyName: string, variants: [...T], options: { description?: string } = {}): TUnion<T> {
  return Type.Unsafe<Static<TUnion<T>>>({ type: 'object', oneOf: variants, discriminator: { propertyName }, ...options }) as unknown as TUnion<T>;
}

export const nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);
