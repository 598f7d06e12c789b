import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import type { TestService } from './service.js';

const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020;

type Schema = Record<string, unknown>;

export interface Operation {
  method: string;
  path: string;
  pathParams: { name: string; schema: Schema }[];
  /** The query parameters as one object schema, for the generator. */
  query?: Schema;
  queryNames: string[];
  body?: Schema;
  /** Documented statuses and the JSON schema of each (null when the status has no body). */
  responses: Record<string, Schema | null>;
}

/** Replaces `#/components/...` references with what they point at, so each schema stands alone. */
function inline(value: unknown, doc: Schema): unknown {
  if (Array.isArray(value)) return value.map((v) => inline(v, doc));
  if (value === null || typeof value !== 'object') return value;
  const ref = (value as { $ref?: string }).$ref;
  if (typeof ref === 'string' && ref.startsWith('#/')) {
    const target = ref
      .slice(2)
      .split('/')
      .reduce<unknown>((node, key) => (node as Schema)[key], doc);
    return inline(target, doc);
  }
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, inline(v, doc)]));
}

/** Every operation of an OpenAPI 3.1 document, with its schemas made self-contained. */
export function operationsOf(doc: Schema): Operation[] {
  const out: Operation[] = [];
  for (const [path, item] of Object.entries(doc.paths as Record<string, Record<string, Schema>>)) {
    for (const [method, rawOp] of Object.entries(item)) {
      const op = inline(rawOp, doc) as Schema;
      const parameters = (op.parameters ?? []) as { name: string; in: string; required?: boolean; schema: Schema }[];
      const queryParams = parameters.filter((p) => p.in === 'query');
      const query = queryParams.length
        ? {
            type: 'object',
            properties: Object.fromEntries(queryParams.map((p) => [p.name, p.schema])),
            required: queryParams.filter((p) => p.required).map((p) => p.name),
          }
        : undefined;
      const body = (op.requestBody as { content?: Record<string, { schema: Schema }> } | undefined)?.content?.['application/json']?.schema;
      const responses: Record<string, Schema | null> = {};
      for (const [status, response] of Object.entries(op.responses as Record<string, { content?: Record<string, { schema: Schema }> }>)) {
        responses[status] = response.content?.['application/json']?.schema ?? null;
      }
      out.push({
        method: method.toUpperCase(),
        path,
        pathParams: parameters.filter((p) => p.in === 'path').map((p) => ({ name: p.name, schema: p.schema })),
        query,
        queryNames: queryParams.map((p) => p.name),
        body,
        responses,
      });
    }
  }
  return out;
}

const ajv = new Ajv2020({ allErrors: true, strict: false, discriminator: true });
addFormats(ajv);

/** A documented response schema, compiled as the JSON Schema 2020-12 that OpenAPI 3.1 uses. */
export function compileDocumentedSchema(schema: Schema): ValidateFunction {
  return ajv.compile(schema);
}

/** Resources the generated requests can name: a few of each, created through the API. */
export async function fixtureIds(svc: TestService): Promise<Record<string, string[]>> {
  const create = async (path: string, body: unknown, pick: (b: any) => string | number) => {
    const res = await svc.call('POST', path, { body });
    if (res.status !== 201) throw new Error(`fixture ${path}: ${res.status} ${res.text}`);
    return String(pick(res.body));
  };
  const checks = [
    await create('/v1/checks/api', { name: 'api', request: { url: 'https://x.test' } }, (b) => b.id),
    await create('/v1/checks/icmp', { name: 'icmp', request: { hostname: 'x.test' } }, (b) => b.id),
    await create('/v1/checks/browser', { name: 'browser', script: 'x' }, (b) => b.id),
    await create('/v1/checks/heartbeat', { name: 'hb', heartbeat: { period: 1, periodUnit: 'hours', grace: 1, graceUnit: 'hours' } }, (b) => b.id),
  ];
  const groups = [await create('/v1/check-groups', { name: 'g' }, (b) => b.id)];
  const channels = [await create('/v1/alert-channels', { type: 'EMAIL', config: { address: 'a@x.test' } }, (b) => b.id)];
  const dashboards = [await create('/v1/dashboards', { header: 'd' }, (b) => b.dashboardId)];
  const windows = [await create('/v1/maintenance-windows', { name: 'w', startsAt: '2026-01-01', endsAt: '2026-01-02' }, (b) => b.id)];
  const variables = [await create('/v1/variables', { key: 'FUZZ', value: 'x' }, (b) => b.key)];
  const sessions = [await create('/v1/test-sessions', { name: 's' }, (b) => b.testSessionId)];
  const keys = [await create('/v1/api-keys', { name: 'fuzz' }, (b) => b.id)];
  return {
    id: [...checks, ...groups, ...channels, ...windows, ...keys],
    checkId: checks,
    groupId: groups,
    dashboardId: dashboards,
    key: variables,
    testSessionId: sessions,
  };
}

/**
 * What a refused request may change by design: the audit log records it, a key's or a session's last use is
 * stamped whatever the answer, the service's own signing secrets are made on first use, and the mail sender
 * works through its outbox in the background.
 */
const BOOKKEEPING: Record<string, string[]> = {
  audit_log: [],
  service_secrets: [],
  account_mails: ['attempts', 'last_error', 'queued_at', 'sent_at', 'body'],
  api_keys: ['last_used_at'],
  user_sessions: ['last_seen_at'],
};

/**
 * A digest of the control-plane tables kept up to date by triggers: each row's hash (its table and its JSON, the
 * bookkeeping columns aside) is added when the row comes and taken away when it goes, so the sum is a digest of the
 * rows there are (a multiset hash), whatever happened in between. A refused request leaves it where it was, even one
 * that wrote and undid; a change rolled back takes its part with it. One read a request, where digesting every row
 * of every table took 58 queries.
 */
export async function installChangeCounter(svc: TestService): Promise<void> {
  const sql = svc.deps.sql;
  await sql`create table fuzz_changes (n numeric not null)`;
  await sql`insert into fuzz_changes (n) values (0)`;
  await sql.unsafe(`create function fuzz_row_hash(t text, r jsonb) returns numeric language sql immutable as $$
      select ('x' || substr(md5(t || ':' || r::text), 1, 15))::bit(60)::bigint::numeric $$`);
  await sql.unsafe(`create function fuzz_count_change() returns trigger language plpgsql as $$
    declare
      delta numeric := 0;
      ignored text[] := coalesce(tg_argv, '{}');
    begin
      if tg_op in ('UPDATE', 'DELETE') then delta := delta - fuzz_row_hash(tg_table_name, to_jsonb(old) - ignored); end if;
      if tg_op in ('UPDATE', 'INSERT') then delta := delta + fuzz_row_hash(tg_table_name, to_jsonb(new) - ignored); end if;
      if delta <> 0 then update fuzz_changes set n = n + delta; end if;
      return null;
    end $$`);
  const tables = await sql<{ name: string }[]>`select table_name as name from information_schema.tables
    where table_schema = current_schema() and table_type = 'BASE TABLE' and table_name <> 'fuzz_changes' order by table_name`;
  for (const { name } of tables) {
    const ignored = BOOKKEEPING[name];
    if (ignored?.length === 0) continue;
    // Names from information_schema and the fixed BOOKKEEPING list only; quoted as identifiers and literals.
    const args = (ignored ?? []).map((c) => `'${c.replace(/'/g, "''")}'`).join(', ');
    await sql.unsafe(
      `create trigger fuzz_count after insert or update or delete on "${name.replace(/"/g, '""')}" for each row execute function fuzz_count_change(${args})`,
    );
  }
}

/** The tables' digest (installChangeCounter) and the results ingest accepted: equal before and after means nothing changed. */
export async function changeCount(svc: TestService): Promise<string> {
  const [row] = await svc.deps.sql<{ n: string }[]>`select n::text from fuzz_changes`;
  const accepted = (await svc.deps.ingest.stats()).acceptedResults;
  return `rows:${row!.n}|accepted:${accepted}`;
}

/**
 * The same schema with string and array sizes capped for the valid-request generator: json-schema-faker spends
 * seconds filling a 1 MB `script` or 1,000 results, and size attacks come from the hostile mutations anyway.
 */
export function boundedForGeneration(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(boundedForGeneration);
  if (value === null || typeof value !== 'object') return value;
  const out = Object.fromEntries(Object.entries(value).map(([k, v]) => [k, boundedForGeneration(v)])) as Schema;
  if (typeof out.maxLength === 'number') out.maxLength = Math.max(Math.min(out.maxLength, 64), Number(out.minLength ?? 0));
  if (typeof out.maxItems === 'number') out.maxItems = Math.max(Math.min(out.maxItems, 3), Number(out.minItems ?? 0));
  return out;
}
