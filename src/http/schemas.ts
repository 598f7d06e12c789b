import { Type, type SchemaOptions, type TUnsafe } from '@sinclair/typebox';

/** A JSON Schema `enum` (one clear "must be one of" error, and a plain enum in OpenAPI). */
export function StringEnum<const T extends readonly string[]>(values: T, options: SchemaOptions = {}): TUnsafe<T[number]> {
  return Type.Unsafe<T[number]>({ type: 'string', enum: [...values], ...options });
}

export function NumberEnum<const T extends readonly number[]>(values: T, options: SchemaOptions = {}): TUnsafe<T[number]> {
  return Type.Unsafe<T[number]>({ type: 'number', enum: [...values], ...options });
}

export function Nullable<T extends import('@sinclair/typebox').TSchema>(schema: T, options: SchemaOptions = {}) {
  return Type.Union([schema, Type.Null()], options);
}
