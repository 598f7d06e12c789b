import { JSONPath } from 'jsonpath-plus';

/** An assertion as a check defines it (the anchor's shape: targets are text). */
export interface Assertion {
  source: string;
  comparison: string;
  property?: string;
  /** What the value is compared with; the anchor's bodies send numbers too (`target: 200`), compared as their text. */
  target?: string | number;
  regex?: string | null;
}

/** An assertion as a result reports it: what was compared, and why it failed (no `error`: it passed). */
export interface AssertionResult extends Assertion {
  actual: unknown;
  error?: string;
}

const isEmpty = (v: unknown) =>
  v === undefined || v === null || v === '' || (Array.isArray(v) && v.length === 0) || (typeof v === 'object' && v !== null && Object.keys(v).length === 0);

const asNumber = (v: unknown): number | undefined => {
  if (typeof v === 'number') return Number.isFinite(v) ? v : undefined;
  if (typeof v === 'string' && v.trim() !== '' && Number.isFinite(Number(v))) return Number(v);
  if (typeof v === 'boolean') return undefined;
  return undefined;
};

const asText = (v: unknown): string => (v === undefined || v === null ? '' : typeof v === 'string' ? v : JSON.stringify(v));

/** Loose equality as people write targets: numbers as numbers, booleans and null as their words, the rest as text. */
function equals(actual: unknown, target: string): boolean {
  const n = asNumber(actual);
  const t = asNumber(target);
  if (n !== undefined && t !== undefined) return n === t;
  if (typeof actual === 'boolean') return String(actual) === target.trim().toLowerCase();
  if (actual === null) return target === 'null';
  return asText(actual) === target;
}

/** One comparison of one value; undefined when the comparison is unknown. */
export function compare(actual: unknown, comparison: string, target = ''): boolean | undefined {
  switch (comparison) {
    case 'EQUALS':
      return equals(actual, target);
    case 'NOT_EQUALS':
      return !equals(actual, target);
    case 'GREATER_THAN':
    case 'LESS_THAN': {
      const a = asNumber(actual);
      const t = asNumber(target);
      if (a === undefined || t === undefined) return false;
      return comparison === 'GREATER_THAN' ? a > t : a < t;
    }
    case 'CONTAINS':
    case 'NOT_CONTAINS': {
      const has = Array.isArray(actual) ? actual.some((v) => equals(v, target)) : asText(actual).includes(target);
      return comparison === 'CONTAINS' ? has : !has;
    }
    case 'IS_EMPTY':
      return isEmpty(actual);
    case 'NOT_EMPTY':
      return !isEmpty(actual);
    case 'IS_NULL':
      return actual === null || actual === undefined;
    case 'NOT_NULL':
      return actual !== null && actual !== undefined;
    case 'HAS_KEY':
    case 'NOT_HAS_KEY': {
      const has = actual !== null && typeof actual === 'object' && !Array.isArray(actual) && Object.hasOwn(actual, target);
      return comparison === 'HAS_KEY' ? has : !has;
    }
    case 'HAS_VALUE':
    case 'NOT_HAS_VALUE': {
      const values = Array.isArray(actual) ? actual : actual !== null && typeof actual === 'object' ? Object.values(actual) : [actual];
      const has = values.some((v) => equals(v, target));
      return comparison === 'HAS_VALUE' ? has : !has;
    }
    default:
      return undefined;
  }
}

const WORDS: Record<string, string> = {
  EQUALS: 'to equal',
  NOT_EQUALS: 'not to equal',
  GREATER_THAN: 'to be greater than',
  LESS_THAN: 'to be less than',
  CONTAINS: 'to contain',
  NOT_CONTAINS: 'not to contain',
  IS_EMPTY: 'to be empty',
  NOT_EMPTY: 'not to be empty',
  IS_NULL: 'to be null',
  NOT_NULL: 'not to be null',
  HAS_KEY: 'to have the key',
  NOT_HAS_KEY: 'not to have the key',
  HAS_VALUE: 'to have the value',
  NOT_HAS_VALUE: 'not to have the value',
};

/**
 * The first capture group of `pattern` in `text` (the whole match without one), or undefined; the anchor uses
 * no /g flag and compares the first group.
 */
export function regexCapture(text: string, pattern: string): string | undefined {
  let re: RegExp;
  try {
    re = new RegExp(pattern);
  } catch {
    throw new Error(`${pattern} is not a regular expression`);
  }
  const m = re.exec(text);
  if (!m) return undefined;
  return m[1] ?? m[0];
}

/** The values a JSONPath selects (`.length` of an array or string works as the anchor documents). */
export function jsonPathValues(json: unknown, path: string): unknown[] {
  const expression = path.trim() || '$';
  const length = /^(.*)\.length$/.exec(expression);
  if (length) {
    return jsonPathValues(json, length[1]).map((v) => (Array.isArray(v) || typeof v === 'string' ? v.length : undefined));
  }
  if (!expression.startsWith('$')) throw new Error(`${path} is not a JSONPath (it must start with $)`);
  return JSONPath({ path: expression, json: json as object, wrap: true, eval: 'safe' }) as unknown[];
}

/**
 * Evaluates assertions in order. `values(a)` gives what an assertion compares: one value, or several (a JSONPath
 * that selects many: each must pass). A source it cannot read fails the assertion with the reason.
 */
export function evaluate(assertions: readonly Assertion[], values: (a: Assertion) => unknown[]): AssertionResult[] {
  return assertions.map((a) => {
    let selected: unknown[];
    try {
      selected = values(a);
    } catch (err) {
      return { ...a, actual: null, error: (err as Error).message };
    }
    const actual = selected.length === 1 ? selected[0] : selected.length === 0 ? undefined : selected;
    const checked = selected.length ? selected : [undefined];
    for (const value of checked) {
      const ok = compare(value, a.comparison, String(a.target ?? ''));
      if (ok === undefined) return { ...a, actual: actual ?? null, error: `${a.comparison} is not a comparison` };
      if (!ok) {
        const wanted = ['IS_EMPTY', 'NOT_EMPTY', 'IS_NULL', 'NOT_NULL'].includes(a.comparison) ? '' : ` ${JSON.stringify(a.target ?? '')}`;
        return { ...a, actual: actual ?? null, error: `expected ${JSON.stringify(value ?? null)} ${WORDS[a.comparison] ?? a.comparison}${wanted}` };
      }
    }
    return { ...a, actual: actual ?? null };
  });
}
