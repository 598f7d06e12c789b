/**
 * A form's draft is the API body it will send, edited in place by path: `request.assertions[1].target` names the
 * same field the API names when it refuses one (its `attributes.errors[].field`, without `body.`), so an error lands
 * at the control that edits it.
 */
export type Json = Record<string, unknown>;

export function parsePath(path: string): (string | number)[] {
  const out: (string | number)[] = [];
  for (const part of path.split('.')) {
    const m = /^([^[\]]*)((?:\[\d+\])*)$/.exec(part);
    if (!m) {
      out.push(part);
      continue;
    }
    if (m[1]) out.push(m[1]);
    for (const idx of m[2]!.matchAll(/\[(\d+)\]/g)) out.push(Number(idx[1]));
  }
  return out;
}

export const joinPath = (base: string, key: string | number) => (typeof key === 'number' ? `${base}[${key}]` : base ? `${base}.${key}` : key);

export function getAt(obj: unknown, path: string): unknown {
  let cur: unknown = obj;
  for (const k of parsePath(path)) {
    if (cur === null || cur === undefined || typeof cur !== 'object') return undefined;
    cur = (cur as Record<string | number, unknown>)[k];
  }
  return cur;
}

/** A copy of `obj` with `value` at `path` (undefined removes the key); what it passes through is copied, the rest shared. */
export function setAt<T>(obj: T, path: string, value: unknown): T {
  const keys = parsePath(path);
  const put = (cur: unknown, i: number): unknown => {
    const k = keys[i]!;
    const base: Record<string | number, unknown> | unknown[] = Array.isArray(cur)
      ? [...cur]
      : cur && typeof cur === 'object'
        ? { ...(cur as Json) }
        : typeof k === 'number'
          ? []
          : {};
    const next = i === keys.length - 1 ? value : put((base as Record<string | number, unknown>)[k], i + 1);
    if (next === undefined && !Array.isArray(base)) delete (base as Json)[k as string];
    else (base as Record<string | number, unknown>)[k] = next;
    return base;
  };
  return put(obj, 0) as T;
}

/** The API's field errors by path, and the ones under a path (a row, a section). */
export const errorsUnder = (errors: Record<string, string>, path: string) =>
  Object.entries(errors).filter(([k]) => k === path || k.startsWith(`${path}.`) || k.startsWith(`${path}[`));

/** A deep copy of plain JSON (a draft from an answer). */
export const copy = <T>(v: T): T => (v === undefined ? v : (JSON.parse(JSON.stringify(v)) as T));
