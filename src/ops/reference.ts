import { pageTemplates } from '../pages/index.js';

/**
 * GET /docs: the API reference as one pre-rendered page, built once from /openapi.json's document. Every operation
 * is readable as the page arrives: no script parses the 1.3 MB document first (Swagger UI took about 8 s here). The
 * interactive Swagger UI stays at /docs/try, one tag at a time.
 */
const eta = pageTemplates(import.meta.url);

type Schema = Record<string, unknown>;
interface Doc {
  info: { title: string; version: string };
  paths: Record<string, Record<string, Operation>>;
  components?: { parameters?: Record<string, Parameter> };
}
interface Operation {
  operationId: string;
  summary?: string;
  description?: string;
  tags?: string[];
  deprecated?: boolean;
  security?: unknown[];
  'x-roles'?: string[];
  parameters?: (Parameter | { $ref: string })[];
  requestBody?: { required?: boolean; content: Record<string, { schema: Schema }> };
  responses: Record<string, { description?: string; content?: Record<string, { schema: Schema }> }>;
}
interface Parameter {
  name: string;
  in: string;
  required?: boolean;
  description?: string;
  schema?: Schema;
}

/** A field of a body: its name, type in words, whether required, what it says, and its own fields (objects, arrays of objects). */
export interface Field {
  name: string;
  type: string;
  required: boolean;
  description: string;
  fields: Field[];
}

const MAX_DEPTH = 4;

/** A schema's type in a few words: `string (uuid)`, `integer 1–100`, `one of: A, B`, `array of object`. */
function typeOf(s: Schema | undefined): string {
  if (!s) return 'any';
  if (Array.isArray(s.enum)) return `one of: ${(s.enum as unknown[]).map((v) => JSON.stringify(v)).join(', ')}`;
  if (s.const !== undefined) return JSON.stringify(s.const);
  const variants = (s.anyOf ?? s.oneOf) as Schema[] | undefined;
  if (variants) return [...new Set(variants.map(typeOf))].join(' or ');
  let t = Array.isArray(s.type) ? (s.type as string[]).join(' or ') : String(s.type ?? 'any');
  if (t === 'array') t = `array of ${typeOf(s.items as Schema | undefined)}`;
  const extra = [
    s.format ? String(s.format) : '',
    s.minimum !== undefined || s.maximum !== undefined ? `${s.minimum ?? ''}–${s.maximum ?? ''}` : '',
    s.maxLength !== undefined ? `≤ ${s.maxLength} chars` : '',
    s.default !== undefined && typeof s.default !== 'object' ? `default ${JSON.stringify(s.default)}` : '',
  ].filter(Boolean);
  return extra.length ? `${t} (${extra.join(', ')})` : t;
}

/** The object a schema's fields live in: itself, its array items, or the branches of a union laid together. */
function objectOf(s: Schema | undefined): Schema | undefined {
  if (!s) return undefined;
  if (s.type === 'array') return objectOf(s.items as Schema | undefined);
  const variants = (s.anyOf ?? s.oneOf) as Schema[] | undefined;
  if (variants) {
    const objects = variants.map(objectOf).filter((v): v is Schema => Boolean(v?.properties));
    if (!objects.length) return undefined;
    return { properties: Object.assign({}, ...objects.map((o) => o.properties)), required: objects.length === 1 ? objects[0]!.required : [] };
  }
  return s.properties ? s : undefined;
}

export function fieldsOf(s: Schema | undefined, depth = 0): Field[] {
  const o = objectOf(s);
  if (!o || depth >= MAX_DEPTH) return [];
  const required = new Set((o.required as string[] | undefined) ?? []);
  return Object.entries(o.properties as Record<string, Schema>).map(([name, p]) => ({
    name,
    type: typeOf(p),
    required: required.has(name),
    description: String(p.description ?? ''),
    fields: fieldsOf(p, depth + 1),
  }));
}

/**
 * A body that is one of several objects (an alert channel by its `type`): each as its own list, named by the
 * property whose value tells them apart, never merged into one list of every branch's fields.
 */
export function variantsOf(s: Schema | undefined): { label: string; fields: Field[] }[] {
  const branches = ((s?.oneOf ?? s?.anyOf) as Schema[] | undefined)?.filter((b) => b.properties) ?? [];
  if (branches.length < 2) return [];
  return branches.map((b, i) => {
    const tag = Object.entries(b.properties as Record<string, Schema>).find(([, p]) => p.const !== undefined);
    return { label: tag ? `${tag[0]}: ${JSON.stringify(tag[1].const)}` : `variant ${i + 1}`, fields: fieldsOf(b) };
  });
}

const METHODS = ['get', 'post', 'put', 'patch', 'delete', 'head', 'options'];

function bodyView(mediaType: string, required: boolean, schema: Schema) {
  const variants = variantsOf(schema);
  return { mediaType, required, type: typeOf(schema), variants, fields: variants.length ? [] : fieldsOf(schema) };
}

/** The page's view of the document: tags in their first-seen order, each with its operations. */
export function referenceView(doc: Doc) {
  const shared = doc.components?.parameters ?? {};
  const tags = new Map<string, unknown[]>();
  for (const [p, ops] of Object.entries(doc.paths)) {
    for (const method of METHODS) {
      const op = ops[method];
      if (!op) continue;
      const params = (op.parameters ?? []).map((x) => ('$ref' in x ? shared[x.$ref.split('/').pop()!] : x)).filter((x): x is Parameter => Boolean(x));
      const body = op.requestBody ? Object.entries(op.requestBody.content)[0] : undefined;
      const tag = op.tags?.[0] ?? 'Other';
      if (!tags.has(tag)) tags.set(tag, []);
      tags.get(tag)!.push({
        id: op.operationId,
        method: method.toUpperCase(),
        path: p,
        summary: op.summary ?? '',
        description: op.description ?? '',
        deprecated: op.deprecated ?? false,
        roles: op['x-roles'] ?? null,
        params: params.map((x) => ({
          name: x.name,
          in: x.in,
          required: x.required ?? false,
          type: typeOf(x.schema),
          description: x.description ?? String(x.schema?.description ?? ''),
        })),
        body: body ? bodyView(body[0], op.requestBody!.required ?? false, body[1].schema) : null,
        responses: Object.entries(op.responses).map(([status, r]) => {
          const content = r.content ? Object.entries(r.content)[0] : undefined;
          return {
            status,
            description: r.description ?? '',
            mediaType: content?.[0] ?? null,
            type: content ? typeOf(content[1].schema) : null,
            fields: content && Number(status) < 400 ? fieldsOf(content[1].schema) : [],
          };
        }),
      });
    }
  }
  return {
    title: doc.info.title,
    version: doc.info.version,
    tags: [...tags].map(([name, operations]) => ({ name, id: `tag-${name.toLowerCase().replace(/[^a-z0-9]+/g, '-')}`, operations })),
  };
}

export function renderReference(doc: unknown): string {
  return eta.render('./reference', referenceView(doc as Doc));
}
