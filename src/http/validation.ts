import type { TSchema } from '@sinclair/typebox';
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { HttpError } from './errors.js';
import { isCanonicalDateTime, URL_FORMATS } from './formats.js';

// ajv-formats ships CommonJS whose default export is the plugin function.
const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

function makeAjv(useDefaults: boolean): Ajv {
  const ajv = new Ajv({
    allErrors: true,
    // Errors carry their schema, so messages can say "exactly one of" or what a pattern means.
    verbose: true,
    useDefaults,
    strict: true,
    // "Exactly one of a and b" is `oneOf: [{required: [a]}, {required: [b]}]` beside the properties that define them.
    strictRequired: false,
    allowUnionTypes: true,
    // `oneOf` over bodies tagged by a property (alert channel `type`) picks its branch by that property.
    discriminator: true,
    // TypeBox adds no unknown keywords; `example` is an OpenAPI annotation.
    keywords: ['example'],
  });
  addFormats(ajv);
  // The canonical form first (isCanonicalDateTime), anything else as ajv-formats checks it; its comparison kept.
  const dateTime = ajv.formats['date-time'] as { validate: (value: string) => boolean; compare: (a: string, b: string) => number | undefined };
  ajv.addFormat('date-time', {
    type: 'string',
    validate: (value: string) => isCanonicalDateTime(value) || dateTime.validate(value),
    compare: dateTime.compare,
  });
  for (const [name, check] of Object.entries(URL_FORMATS)) ajv.addFormat(name, { type: 'string', validate: check });
  return ajv;
}

/** Requests get their defaults filled; path and query strings are converted by `parseStrings` first, never by ajv. */
const requestAjv = makeAjv(true);
/** Responses are checked as-is, without filling defaults into them. */
const responseAjv = makeAjv(false);

export interface FieldError {
  field: string;
  rule: string;
  message: string;
}

function joinPath(base: string, instancePath: string): string {
  if (!instancePath) return base;
  return (
    base +
    instancePath
      .split('/')
      .slice(1)
      .map((seg) => (/^\d+$/.test(seg) ? `[${seg}]` : `.${seg}`))
      .join('')
  );
}

/** `oneOf: [{required: [a]}, {required: [b]}]`: the schema's way to say "exactly one of a and b". */
function exactlyOneOf(e: ErrorObject): string[] | undefined {
  if (e.keyword !== 'oneOf' || !Array.isArray(e.schema)) return undefined;
  const names = (e.schema as { required?: string[] }[]).map((branch) => branch.required);
  return names.every((r) => Array.isArray(r) && r.length === 1) ? names.map((r) => r![0]) : undefined;
}

export function describeErrors(location: string, errors: ErrorObject[]): FieldError[] {
  const out: FieldError[] = [];
  const seen = new Set<string>();
  // An "exactly one of" rule reports itself once; the errors of its branches would only repeat it.
  const oneOfPaths = errors.filter((e) => exactlyOneOf(e)).map((e) => `${e.schemaPath}/`);
  for (const e of errors) {
    if (oneOfPaths.some((p) => e.schemaPath.startsWith(p))) continue;
    let field = joinPath(location, e.instancePath);
    let message = e.message ?? 'is invalid';
    let rule = e.keyword;
    const oneOf = exactlyOneOf(e);
    if (oneOf) {
      field = `${field}.${oneOf[0]}`;
      message = `give exactly one of ${oneOf.join(' and ')}`;
    } else if (e.keyword === 'discriminator') {
      const { tag, tagValue } = e.params as { tag: string; tagValue?: unknown };
      field = `${field}.${tag}`;
      if (tagValue === undefined) {
        message = 'is required';
        rule = 'required';
      } else {
        const values = ((e.parentSchema as { oneOf?: { properties?: Record<string, { const?: unknown }> }[] })?.oneOf ?? []).map(
          (branch) => branch.properties?.[tag]?.const,
        );
        message = `must be one of: ${values.map((v) => JSON.stringify(v)).join(', ')}`;
        rule = 'enum';
      }
    } else if (e.keyword === 'pattern' && (e.parentSchema as { title?: string })?.title) {
      // A schema's title says in words what its pattern means.
      message = `must be ${(e.parentSchema as { title: string }).title}`;
    } else if (e.keyword === 'required') {
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
    if (!oneOf && (e.keyword === 'anyOf' || e.keyword === 'oneOf') && errors.length > 1) continue;
    const key = `${field}|${rule}|${message}`;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push({ field, rule, message });
  }
  return out;
}

export function validationError(errors: FieldError[]): HttpError {
  const first = errors[0];
  const message = first ? `${first.field} ${first.message}` : 'Invalid request';
  return new HttpError(400, message, { errors });
}

/** `plainText`: the value was parsed from a JSON text with no escape that can make U+0000 or a lone surrogate (body.ts). */
export type Validator = (value: unknown, plainText?: boolean) => unknown;

/**
 * Strings Postgres and ClickHouse cannot store faithfully: U+0000 (Postgres rejects it in text and jsonb)
 * and unpaired surrogates (they would be written as U+FFFD). Object keys are checked like values.
 */
export function findBadText(value: unknown, location: string, out: FieldError[] = []): FieldError[] {
  // The walk that names fields builds a path for every value; a request without bad text (nearly all) is only scanned.
  if (out.length === 0 && !hasBadText(value)) return out;
  return findBadTextAt(value, location, out);
}

/** Whether any string or key of `value` is one findBadText reports: a scan that builds nothing. */
function hasBadText(value: unknown): boolean {
  if (typeof value === 'string') return value.includes('\u0000') || !value.isWellFormed();
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) if (hasBadText(value[i])) return true;
    return false;
  }
  if (value !== null && typeof value === 'object') {
    // for…in over own keys: no array of the keys made for every object of the body.
    for (const key in value) if (Object.hasOwn(value, key) && (hasBadText(key) || hasBadText((value as Record<string, unknown>)[key]))) return true;
  }
  return false;
}

function findBadTextAt(value: unknown, location: string, out: FieldError[]): FieldError[] {
  if (typeof value === 'string') {
    if (value.includes('\u0000')) out.push({ field: location, rule: 'characters', message: 'must not contain the NUL character (U+0000)' });
    else if (!value.isWellFormed()) out.push({ field: location, rule: 'unicode', message: 'must be well-formed Unicode (it has an unpaired surrogate)' });
  } else if (Array.isArray(value)) {
    value.forEach((item, i) => findBadTextAt(item, `${location}[${i}]`, out));
  } else if (value !== null && typeof value === 'object') {
    for (const [key, item] of Object.entries(value)) {
      const field = `${location}.${key}`;
      if (key.includes('\u0000') || !key.isWellFormed()) {
        out.push({ field: `${location}.${JSON.stringify(key).slice(1, -1)}`, rule: 'characters', message: 'is not an allowed property name' });
      } else {
        findBadTextAt(item, field, out);
      }
    }
  }
  return out;
}

const INTEGER_TEXT = /^-?\d{1,16}$/;
const NUMBER_TEXT = /^-?\d{1,16}(\.\d{1,16})?$/;

/** One scalar of a path or query string, converted only when it is written exactly as its type. */
function parseScalar(schema: { type?: unknown } | undefined, text: string): unknown {
  const type = schema?.type;
  if (type === 'integer' && INTEGER_TEXT.test(text)) return Number(text);
  if (type === 'number' && NUMBER_TEXT.test(text)) return Number(text);
  if (type === 'boolean' && (text === 'true' || text === 'false')) return text === 'true';
  return text;
}

type PropertySchemas = Record<string, { type?: unknown; items?: { type?: unknown } }>;

/**
 * Path and query values arrive as strings. Each is converted to its declared scalar type only when it is
 * written exactly in that type's form (`5`, not ` 5`, `+5`, `5.0`, `1e1` or `Infinity`); anything else stays
 * a string and fails validation as the wrong type. List properties arrive as `a,b` (the contract's form), as
 * repeated names, or both: they get one flat list of trimmed, non-empty items.
 */
export function parseStrings(schema: TSchema, values: Record<string, unknown>): Record<string, unknown> {
  const properties = ((schema as { properties?: PropertySchemas }).properties ?? {}) as PropertySchemas;
  const out: Record<string, unknown> = {};
  for (const [given, value] of Object.entries(values)) {
    // `tag[]=a&tag[]=b` is how axios (the anchor's CLI) sends lists: the same list as `tag`.
    const bare = given.endsWith('[]') ? given.slice(0, -2) : given;
    const name = bare !== given && properties[bare]?.type === 'array' ? bare : given;
    const prop = properties[name];
    if (prop?.type === 'array') {
      const parts = (Array.isArray(value) ? value : [value]).flatMap((v) => String(v).split(','));
      const items = parts
        .map((p) => p.trim())
        .filter((p) => p !== '')
        .map((p) => parseScalar(prop.items, p));
      out[name] = [...((out[name] as unknown[] | undefined) ?? []), ...items];
    } else {
      out[name] = typeof value === 'string' ? parseScalar(prop, value) : value;
    }
  }
  return out;
}

export interface ValidatorOptions {
  /** Path and query: the values are strings to convert with `parseStrings` first. */
  strings?: boolean;
}

/**
 * Compiles once; the returned function checks text (NUL, unpaired surrogates), validates filling defaults,
 * and throws one 400 naming each field and rule.
 */
export function compileValidator(location: string, schema: TSchema, options: ValidatorOptions = {}): Validator {
  const validate: ValidateFunction = requestAjv.compile(schema);
  return (input, plainText = false) => {
    const value = options.strings ? parseStrings(schema, input as Record<string, unknown>) : input;
    // A value parsed from a text without such escapes holds no such strings: no walk.
    const textErrors = plainText === true ? [] : findBadText(value, location);
    if (textErrors.length) throw validationError(textErrors);
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
