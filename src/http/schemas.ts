import { type SchemaOptions, type Static, type TNull, type TObject, type TSchema, type TUnion, type TUnknown, type TUnsafe, Type } from '@sinclair/typebox';

/** A JSON Schema `enum` (one clear "must be one of" error, and a plain enum in OpenAPI). */
export function StringEnum<const T extends readonly string[]>(values: T, options: SchemaOptions = {}): TUnsafe<T[number]> {
  return Type.Unsafe<T[number]>({ type: 'string', enum: [...values], ...options });
}

export function NumberEnum<const T extends readonly number[]>(values: T, options: SchemaOptions = {}): TUnsafe<T[number]> {
  return Type.Unsafe<T[number]>({ type: 'number', enum: [...values], ...options });
}

/**
 * `T | null` as `type: [T, "null"]` rather than `anyOf`: ajv then still fills defaults inside the value,
 * and errors name the field once instead of once per branch.
 */
export function Nullable<T extends TSchema>(schema: T, options: SchemaOptions = {}): TUnion<[T, TNull]> {
  const s = schema as unknown as { type?: unknown; enum?: unknown[]; anyOf?: unknown };
  if (typeof s.type !== 'string' || s.anyOf) return Type.Union([schema, Type.Null()], options);
  const copy = { ...schema, ...options, type: [s.type, 'null'] } as Record<string, unknown>;
  if (s.enum) copy.enum = [...s.enum, null];
  return copy as unknown as TUnion<[T, TNull]>;
}

/**
 * Objects told apart by one string property (`type`): a `oneOf` with an OpenAPI `discriminator`, so the
 * document says which shape goes with which tag and ajv validates only the branch the tag names.
 */
export function TaggedUnion<T extends TObject[]>(tag: string, branches: [...T], options: SchemaOptions = {}): TUnsafe<Static<T[number]>> {
  for (const branch of branches) {
    const value = (branch.properties[tag] as { const?: unknown } | undefined)?.const;
    if (typeof value !== 'string' || !(branch.required ?? []).includes(tag)) {
      throw new Error(`TaggedUnion: every branch needs a required ${tag} with a string const`);
    }
  }
  const tags = branches.map((b) => (b.properties[tag] as unknown as { const: string }).const);
  return Type.Unsafe<Static<T[number]>>({
    type: 'object',
    properties: { [tag]: { type: 'string', enum: tags } },
    required: [tag],
    discriminator: { propertyName: tag },
    oneOf: branches,
    ...options,
  });
}

/**
 * A field the anchor API accepts that means nothing here (or is read-only): accepted in any form, never
 * stored, documented as ignored.
 */
export function IgnoredField(why = 'it has no meaning in this service'): TUnknown {
  return Type.Unknown({ description: `${IGNORED_PREFIX}${why}` });
}
export const IGNORED_PREFIX = 'Accepted for compatibility with the anchor API and ignored: ';
