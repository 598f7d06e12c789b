import { useEffect, useState } from 'preact/hooks';
import { get } from '../api';
import { parsePath } from './draft';

/**
 * The service's own description of what it takes (GET /openapi.json, the schemas its API validates with): the forms
 * read their choices (check types, methods, assertion sources, channel kinds…) and the fields they do not lay out
 * themselves from it, so a type, kind, value or field the service adds shows up here without a console change.
 */
export interface Schema {
  type?: string | string[];
  enum?: unknown[];
  const?: unknown;
  items?: Schema;
  properties?: Record<string, Schema>;
  required?: string[];
  description?: string;
  deprecated?: boolean;
  default?: unknown;
  minimum?: number;
  maximum?: number;
  maxLength?: number;
  format?: string;
  anyOf?: Schema[];
  oneOf?: Schema[];
  $ref?: string;
  additionalProperties?: boolean | Schema;
}

interface Operation {
  operationId?: string;
  summary?: string;
  requestBody?: { content: Record<string, { schema: Schema }> };
}
export interface ApiDocument {
  paths: Record<string, Record<string, Operation>>;
  components?: { schemas?: Record<string, Schema> };
}

let documentOnce: Promise<ApiDocument> | undefined;
export const openApi = () =>
  (documentOnce ??= get<ApiDocument>('/openapi.json').catch((err) => {
    documentOnce = undefined;
    throw err;
  }));

/** The document once loaded (null until then), with its load error. */
export function useOpenApi(): { doc: ApiDocument | null; error: unknown } {
  const [state, setState] = useState<{ doc: ApiDocument | null; error: unknown }>({ doc: null, error: null });
  useEffect(() => {
    let live = true;
    openApi().then(
      (doc) => live && setState({ doc, error: null }),
      (error) => live && setState({ doc: null, error }),
    );
    return () => {
      live = false;
    };
  }, []);
  return state;
}

/** A schema with its reference followed, and `X | null` read as X. */
export function resolve(doc: ApiDocument, schema: Schema | undefined): Schema | undefined {
  let s = schema;
  for (let i = 0; s?.$ref && i < 10; i++) s = doc.components?.schemas?.[s.$ref.split('/').pop()!];
  const branches = s?.anyOf ?? (s && !s.properties ? s.oneOf : undefined);
  if (s && branches) {
    const nonNull = branches.map((b) => resolve(doc, b)!).filter((b) => b && !isNullOnly(b));
    if (nonNull.length === 1) return { ...nonNull[0], description: s.description ?? nonNull[0]!.description };
  }
  return s;
}

const isNullOnly = (s: Schema) => s.type === 'null' || (s.enum?.length === 1 && s.enum[0] === null);

/** The JSON body an operation takes. */
export function bodyOf(doc: ApiDocument, path: string, method: string): Schema | undefined {
  return resolve(doc, doc.paths[path]?.[method.toLowerCase()]?.requestBody?.content['application/json']?.schema);
}

/** The schema of a field inside a body (`request.assertions[0].source`: the items of arrays stand for any index). */
export function schemaAt(doc: ApiDocument, root: Schema | undefined, path: string): Schema | undefined {
  let s = resolve(doc, root);
  for (const k of parsePath(path)) {
    if (!s) return undefined;
    s = typeof k === 'number' ? resolve(doc, s.items) : resolve(doc, s.properties?.[k]);
  }
  return s;
}

/** The values a field takes (its enum, without null), in the document's order. */
export function choicesAt(doc: ApiDocument, root: Schema | undefined, path: string): string[] {
  const s = schemaAt(doc, root, path);
  const values = s?.enum ?? s?.items?.enum ?? resolve(doc, s?.items)?.enum ?? [];
  return values.filter((v) => v !== null && v !== '').map(String);
}

/** A field the API accepts only to ignore it (another type's field, a read-only one echoed back). */
export const isIgnored = (s: Schema | undefined) => !s || /ignored|read-only/i.test(s.description ?? '') || s.deprecated === true;

/** The check types the service creates: each `POST /v1/checks/{segment}` it documents, by segment. */
export function checkSegments(doc: ApiDocument): string[] {
  return Object.keys(doc.paths)
    .map((p) => /^\/v1\/checks\/([a-z-]+)$/.exec(p)?.[1])
    .filter((seg): seg is string => Boolean(seg) && Boolean(doc.paths[`/v1/checks/${seg}`]?.post))
    .filter((seg) => !['statuses', 'runtimes'].includes(seg));
}

/**
 * The branches of a body tagged by one property (an alert channel's `type`): each tag's value and its branch. A tag
 * the service adds is one more branch here.
 */
export function taggedBranches(doc: ApiDocument, schema: Schema | undefined, tag: string): { value: string; schema: Schema }[] {
  const s = resolve(doc, schema);
  const branches = (s?.oneOf ?? s?.anyOf ?? []).map((b) => resolve(doc, b)!).filter(Boolean);
  return branches.flatMap((b) => {
    const t = resolve(doc, b.properties?.[tag]);
    const values = t?.const !== undefined ? [t.const] : (t?.enum ?? []);
    return values.map((v) => ({ value: String(v), schema: b }));
  });
}
