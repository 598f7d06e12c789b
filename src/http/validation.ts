import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { TSchema } from '@sinclair/typebox';
import { HttpError } from './errors.js';

// ajv-formats ships CommonJS whose default export is the plugin function.
const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

function makeAjv(coerce: boolean): Ajv {
  const ajv = new Ajv({
    allErrors: true,
    useDefaults: true,
    coerceTypes: coerce,
    strict: true,
    allowUnionTypes: true,
    // TypeBox adds no unknown keywords; `example` is an OpenAPI annotation.
    keywords: ['example'],
  });
  addFormats(ajv);
  return ajv;
}

/** Bodies keep their JSON types; path and query strings are coerced to the declared scalar types. */
export const bodyAjv = makeAjv(false);
export const stringAjv = makeAjv(true);
/** Responses are checked as-is, without filling defaults into them. */
const responseAjv = new Ajv({ allErrors: true, strict: true, allowUnionTypes: true, keywords: ['example'] });
addFormats(responseAjv);

export interface FieldError {
  field: string;
  rule: string;
  message: string;
}

function joinPath(base: string, instancePath: string): string {
  if (!instancePath) return base;
  return base + instancePath.split('/').slice(1).map((seg) => (/^\d+$/.test(seg) ? `[${seg}]` : `.${seg}`)).join('');
}

export function describeErrors(location: string, errors: ErrorObject[]): FieldError[] {
  const out: FieldError[] = [];
  const seen = new Set<string>();
  for (const e of errors) {
    let field = joinPath(location, e.instancePath);
    let message = e.message ?? 'is invalid';
    if (e.keyword === 'required') {
      field = `${field}.${(e.params as { missingProperty: string }).missingProperty}`;
      message = 'is required';
    } else if (e.keyword === 'additionalProperties') {
      field = `${field}.${(e.params as { additionalProperty: string }).additionalProperty}`;
      message = 'is not an allowed property';
    } else if (e.keyword === 'enum') {
      const allowed = (e.params as { allowedValues: unknown[] }).allowedValues;
      message = `must be one of: ${allowed.map((v) => JSON.stringify(v)).join(', ')}`;
    }
    // anyOf/oneOf report every branch; the branch errors above already name the field.
    if ((e.keyword === 'anyOf' || e.keyword === 'oneOf') && errors.length > 1) continue;
    const key = `${field}|${e.keyword}|${message}`;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push({ field, rule: e.keyword, message });
  }
  return out;
}

export function validationError(errors: FieldError[]): HttpError {
  const first = errors[0];
  const message = first ? `${first.field} ${first.message}` : 'Invalid request';
  return new HttpError(400, message, { errors });
}

export type Validator = (value: unknown) => unknown;

/** Compiles once; the returned function validates (filling defaults) or throws a 400 naming each field. */
export function compileValidator(location: string, schema: TSchema, coerce: boolean): Validator {
  const validate: ValidateFunction = (coerce ? stringAjv : bodyAjv).compile(schema);
  return (value) => {
    if (!validate(value)) throw validationError(describeErrors(location, validate.errors ?? []));
    return value;
  };
}

/** Used when response checking is on (tests): a handler that breaks its own schema is a server bug. */
export function compileResponseValidator(schema: TSchema): (value: unknown) => void {
  const validate = responseAjv.compile(schema);
  return (value) => {
    if (!validate(value)) {
      const detail = describeErrors('response', validate.errors ?? []).map((e) => `${e.field} ${e.message}`);
      throw new Error(`Response does not match its schema: ${detail.join('; ')}`);
    }
  };
}

/**
 * Query lists arrive as `a,b` (the contract's form), as repeated names, or both; the array-typed properties
 * of the query schema get one flat list of trimmed, non-empty items before validation.
 */
export function splitListParams(schema: TSchema, query: Record<string, unknown>): Record<string, unknown> {
  const properties = (schema as { properties?: Record<string, { type?: unknown }> }).properties ?? {};
  const out = { ...query };
  for (const [name, value] of Object.entries(query)) {
    if (properties[name]?.type !== 'array' || value === undefined) continue;
    const parts = (Array.isArray(value) ? value : [value]).flatMap((v) => String(v).split(','));
    out[name] = parts.map((p) => p.trim()).filter((p) => p !== '');
  }
  return out;
}
