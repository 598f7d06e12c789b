import { readFileSync } from 'node:fs';
import { Ajv, type ValidateFunction } from 'ajv';

/**
 * The anchor API's public OpenAPI 3.0 document (a normalised copy of ../shared/anchor/openapi.json), and
 * what the compatibility replay needs of it: its operations, bodies built from its own examples, and its
 * response schemas as validators.
 */
type Schema = Record<string, unknown>;
type Doc = { paths: Record<string, Record<string, Schema>>; components: { schemas: Record<string, Schema> } };

export const ANCHOR: Doc = JSON.parse(readFileSync(new URL('../fixtures/anchor-openapi.json', import.meta.url), 'utf8'));

export interface AnchorOperation {
  method: string;
  path: string;
  op: Schema;
}

export function anchorOperations(): AnchorOperation[] {
  return Object.entries(ANCHOR.paths).flatMap(([path, ops]) =>
    Object.entries(ops)
      .filter(([m]) => ['get', 'post', 'put', 'delete', 'patch'].includes(m))
      .map(([m, op]) => ({ method: m.toUpperCase(), path, op })),
  );
}

/** `/v1/checks/{id}` and `/v1/checks/{checkId}` are the same route. */
export const routeKey = (method: string, path: string) => `${method.toUpperCase()} ${path.replace(/\{[^}]+\}/g, '{}')}`;

function resolve(schema: Schema | undefined): Schema {
  let s = schema ?? {};
  for (let i = 0; i < 20 && typeof s.$ref === 'string'; i++) s = ANCHOR.components.schemas[(s.$ref as string).split('/').pop()!] ?? {};
  return s;
}

function hasExample(schema: Schema | undefined, depth = 0): boolean {
  const s = resolve(schema);
  if (depth > 8) return false;
  if ('example' in s) return true;
  const parts = [...((s.allOf as Schema[]) ?? []), ...((s.anyOf as Schema[]) ?? []), ...((s.oneOf as Schema[]) ?? [])];
  if (parts.some((p) => hasExample(p, depth + 1))) return true;
  if (s.properties) return Object.values(s.properties as Record<string, Schema>).some((p) => hasExample(p, depth + 1));
  if (s.items) return hasExample(s.items as Schema, depth + 1);
  return false;
}

/** Where the document gives a string no example, a value its field name calls for. */
const STRING_BY_NAME: Record<string, string> = {
  url: 'http://127.0.0.1:9/',
  hostname: '127.0.0.1',
  address: 'ops@example.com',
  number: '+15555550100',
};

/**
 * A value for `schema` made from the document's own examples: an example where the schema gives one; an
 * object holds its required properties and every property that has an example somewhere below it; a value
 * the document gives no example for is its default, its first enum value, or the plainest of its type.
 */
export function exampleOf(schema: Schema | undefined, depth = 0, name = ''): unknown {
  const s = resolve(schema);
  if ('example' in s) return s.example;
  if (depth > 8) return undefined;
  if (Array.isArray(s.allOf)) {
    return Object.assign({}, ...(s.allOf as Schema[]).map((p) => exampleOf(p, depth + 1)).filter((v) => v && typeof v === 'object'));
  }
  const branches = (s.anyOf ?? s.oneOf) as Schema[] | undefined;
  if (branches) {
    const usable = branches.filter((b) => !(Object.keys(resolve(b)).length === 1 && resolve(b).nullable));
    const withExample = usable.find((b) => hasExample(b)) ?? usable[0];
    return withExample ? exampleOf(withExample, depth + 1) : null;
  }
  if ('default' in s && s.default !== null && !(Array.isArray(s.default) && s.default.length === 0 && hasExample(s.items as Schema))) return s.default;
  if (Array.isArray(s.enum)) return s.enum.find((v) => v !== null);
  if (s.type === 'object' || s.properties) {
    const required = new Set((s.required as string[]) ?? []);
    const out: Record<string, unknown> = {};
    for (const [name, prop] of Object.entries((s.properties as Record<string, Schema>) ?? {})) {
      if (!required.has(name) && !hasExample(prop)) continue;
      const value = exampleOf(prop, depth + 1, name);
      if (value !== undefined) out[name] = value;
    }
    return out;
  }
  if (s.type === 'array') return hasExample(s.items as Schema) || (s.minItems as number) > 0 ? [exampleOf(s.items as Schema, depth + 1, name)] : [];
  if (s.type === 'string') return STRING_BY_NAME[name] ?? 'example';
  if (s.type === 'integer' || s.type === 'number') return (s.minimum as number | undefined) ?? 1;
  if (s.type === 'boolean') return false;
  return undefined;
}

/** OpenAPI 3.0 schema → JSON Schema for ajv: nullable, boolean exclusive bounds, refs into one root. */
function toJsonSchema(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(toJsonSchema);
  if (!node || typeof node !== 'object') return node;
  const src = node as Schema;
  const out: Schema = {};
  for (const [k, v] of Object.entries(src)) {
    if (k.startsWith('x-') || ['example', 'discriminator', 'format', 'nullable', 'readOnly', 'writeOnly', 'deprecated', 'xml', 'externalDocs'].includes(k))
      continue;
    if (k === '$ref') out.$ref = `anchor#/definitions/${String(v).split('/').pop()}`;
    else if (k === 'properties' && v && typeof v === 'object') out.properties = Object.fromEntries(Object.entries(v).map(([n, p]) => [n, toJsonSchema(p)]));
    else out[k] = toJsonSchema(v);
  }
  if (src.exclusiveMinimum === true) {
    out.exclusiveMinimum = src.minimum;
    delete out.minimum;
  } else if (src.exclusiveMinimum === false) delete out.exclusiveMinimum;
  if (src.exclusiveMaximum === true) {
    out.exclusiveMaximum = src.maximum;
    delete out.maximum;
  } else if (src.exclusiveMaximum === false) delete out.exclusiveMaximum;
  // `allOf: [X, {nullable: true}]`: the document's way to say "X or null".
  const allOf = src.allOf as Schema[] | undefined;
  if (allOf?.some((m) => m.nullable === true && Object.keys(m).length === 1)) {
    const rest = allOf.filter((m) => !(m.nullable === true && Object.keys(m).length === 1)).map(toJsonSchema);
    const { allOf: _drop, ...others } = out;
    return { anyOf: [{ ...others, allOf: rest }, { type: 'null' }] };
  }
  if (src.nullable === true) {
    if (typeof out.type === 'string') {
      out.type = [out.type, 'null'];
      if (Array.isArray(out.enum) && !out.enum.includes(null)) out.enum = [...out.enum, null];
    } else if (Object.keys(out).length) return { anyOf: [out, { type: 'null' }] };
  }
  return out;
}

const ajv = new Ajv({ strict: false, allErrors: true, validateFormats: false, allowUnionTypes: true });
ajv.addSchema({ $id: 'anchor', definitions: Object.fromEntries(Object.entries(ANCHOR.components.schemas).map(([n, s]) => [n, toJsonSchema(s)])) });
const compiled = new Map<string, ValidateFunction>();

/** The anchor's schema of an operation's response `status`, as a validator; undefined when it documents none. */
export function responseValidator(op: Schema, status: number): ValidateFunction | undefined {
  const responses = op.responses as Record<string, Schema>;
  const schema = (responses[String(status)]?.content as Record<string, Schema> | undefined)?.['application/json']?.schema;
  if (!schema) return undefined;
  const key = JSON.stringify(schema);
  let v = compiled.get(key);
  if (!v) {
    v = ajv.compile(toJsonSchema(schema) as object);
    compiled.set(key, v);
  }
  return v;
}

export const successStatuses = (op: Schema) =>
  Object.keys(op.responses as object)
    .filter((s) => s.startsWith('2'))
    .map(Number);

export function requestBodySchema(op: Schema): Schema | undefined {
  return ((op.requestBody as Schema | undefined)?.content as Record<string, Schema> | undefined)?.['application/json']?.schema as Schema | undefined;
}
