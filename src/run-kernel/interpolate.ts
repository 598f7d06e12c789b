import { randomUUID } from 'node:crypto';
import checklyHandlebars from '@checkly/handlebars';

/**
 * `{{VARIABLE}}` in API requests as the anchor renders them: Handlebars with its helpers ($UUID,
 * $RANDOM_NUMBER, moment, …); `{{X}}` writes X URI-encoded, `{{{X}}}` as it is. Variables are the account's, the
 * group's and the check's (later wins), and the run's own (CHECK_ID, REGION, …).
 */
const handlebars = checklyHandlebars.create();
handlebars.registerHelper('__uri', (value: unknown) => (value === undefined || value === null ? '' : encodeURIComponent(String(value))));

type Node = { type: string; [k: string]: unknown };

/** Rewrites every escaped mustache `{{…}}` into `{{{__uri …}}}`: the value URI-encoded instead of HTML-escaped. */
function uriEscaped(node: Node): void {
  const visit = (n: unknown): void => {
    if (!n || typeof n !== 'object') return;
    const x = n as Node;
    if (x.type === 'MustacheStatement' && x.escaped) {
      const path = x.path as { type: string; original?: string; parts?: string[] };
      const params = (x.params as unknown[]) ?? [];
      const isHelper = path.type === 'PathExpression' && typeof path.original === 'string' && path.original in handlebars.helpers;
      const inner = params.length || x.hash || isHelper ? { type: 'SubExpression', path: x.path, params, hash: x.hash, loc: x.loc } : x.path;
      x.path = { type: 'PathExpression', data: false, depth: 0, parts: ['__uri'], original: '__uri', loc: x.loc };
      x.params = [inner];
      x.hash = undefined;
      x.escaped = false;
      return;
    }
    for (const key of ['body', 'program', 'inverse']) {
      const child = x[key];
      if (Array.isArray(child)) child.forEach(visit);
      else if (child) visit(child);
    }
  };
  visit(node);
}

const cache = new Map<string, HandlebarsTemplateDelegate>();

function compile(template: string): HandlebarsTemplateDelegate {
  let fn = cache.get(template);
  if (!fn) {
    const ast = handlebars.parse(template) as unknown as Node;
    uriEscaped(ast);
    fn = handlebars.compile(ast as never, { noEscape: true, strict: false });
    if (cache.size >= 2000) cache.delete(cache.keys().next().value!);
    cache.set(template, fn);
  }
  return fn;
}

/** Renders `text` with `context`; text without `{{` is returned as it is. Throws on a template that does not parse. */
export function interpolate(text: string, context: Record<string, unknown>): string {
  return text.includes('{{') ? compile(text)(context) : text;
}

/** The run's own variables, beside the account's, group's and check's. */
export function runVariables(run: { accountId: string; checkId: string; checkName: string; checkType: string; location: string; resultId: string }) {
  return {
    ACCOUNT_ID: run.accountId,
    CHECK_ID: run.checkId,
    CHECK_NAME: run.checkName,
    CHECK_TYPE: run.checkType,
    CHECK_RESULT_ID: run.resultId,
    CHECK_RUN_ID: randomUUID(),
    REGION: run.location,
    RUNTIME_VERSION: 'node',
  };
}

/** Replaces every secret value in a JSON-able value with `********` (results and logs never echo them). */
export function maskSecretValues<T>(value: T, secrets: readonly string[]): T {
  const usable = secrets.filter((s) => s.length >= 1);
  if (!usable.length) return value;
  let text = JSON.stringify(value);
  if (text === undefined) return value;
  for (const secret of [...usable].sort((a, b) => b.length - a.length)) {
    for (const form of new Set([JSON.stringify(secret).slice(1, -1), encodeURIComponent(secret)])) text = text.split(form).join('********');
  }
  return JSON.parse(text) as T;
}
