import { type CheckInput, createBodySchema, insertCheck } from '../checks/index.js';
import { compileValidator } from '../http/validation.js';
import { toRow } from '../ingest/index.js';
import { CREATABLE_TYPES, LOCATIONS, type TypeSegment } from '../model/checks.js';
import { type ResultRow, ROW_COLUMNS } from '../model/results.js';
import type { Store } from '../storage/clickhouse/index.js';
import type { Sql } from '../storage/postgres.js';
import { generateRuns, runCount, type SeedCheck, type SeedWindow } from './generator.js';

export interface SeedPlan {
  count: number;
  types: TypeSegment[];
  frequency: number;
  /** How many locations of the enum each check runs in (from the start of the list). */
  locations: number;
}

/**
 * A valid create body for each type, so seeded checks are ordinary checks. They run in parallel: the generator
 * makes a run in every location at every interval, which is what a parallel check's runners report.
 */
export function seedCheckBody(segment: TypeSegment, i: number, plan: SeedPlan): Record<string, unknown> {
  const common = {
    name: `seed ${segment} ${i + 1}`,
    frequency: plan.frequency,
    runParallel: true,
    locations: LOCATIONS.slice(0, plan.locations),
    tags: ['seed', segment],
  };
  return { ...common, ...SEED_FIELDS[segment](i, plan) };
}

/** What each type's create body adds to the common fields (one entry per type, or it does not compile). */
const SEED_FIELDS: Record<TypeSegment, (i: number, plan: SeedPlan) => Record<string, unknown>> = {
  api: (i) => ({ request: { url: `https://api.example.test/items/${i}` } }),
  url: (i) => ({ request: { url: `https://www.example.test/${i}` } }),
  tcp: (i) => ({ request: { hostname: `db${i}.example.test`, port: 5432 } }),
  dns: (i) => ({ request: { hostname: `host${i}.example.test` } }),
  icmp: (i) => ({ request: { hostname: `edge${i}.example.test` } }),
  agentic: (i) => ({ intent: { goal: `The checkout of shop ${i} completes` } }),
  traceroute: (i) => ({ request: { url: `edge${i}.example.test` } }),
  ssl: (i) => ({ request: { sslConfig: { hostname: `www${i}.example.test` } } }),
  grpc: (i) => ({ request: { url: `grpc${i}.example.test`, port: 443 } }),
  heartbeat: (_i, plan) => ({ heartbeat: { period: plan.frequency, periodUnit: 'minutes', grace: 5, graceUnit: 'minutes' } }),
  browser: (i) => ({ script: `// seeded browser check ${i}` }),
  multistep: (i) => ({ script: `// seeded multistep check ${i}` }),
  playwright: (i) => ({ script: `// seeded playwright check ${i}` }),
};

/** Round-robin over the requested types. */
export function planSegments(plan: SeedPlan): TypeSegment[] {
  return Array.from({ length: plan.count }, (_, i) => plan.types[i % plan.types.length]);
}

/** Creates the plan's checks straight in Postgres (the bulk path), validated like API bodies. */
export async function createSeedChecks(sql: Sql, accountId: string, plan: SeedPlan): Promise<SeedCheck[]> {
  const validators = new Map<TypeSegment, (v: unknown) => unknown>();
  const checks: SeedCheck[] = [];
  for (const [i, segment] of planSegments(plan).entries()) {
    if (!validators.has(segment)) validators.set(segment, compileValidator('body', createBodySchema(segment)));
    const data = validators.get(segment)!(seedCheckBody(segment, i, plan)) as CheckInput;
    const id = await insertCheck(sql, accountId, CREATABLE_TYPES[segment], data);
    checks.push({ id, checkType: CREATABLE_TYPES[segment], frequency: plan.frequency, locations: [...LOCATIONS.slice(0, plan.locations)] });
  }
  return checks;
}

export function totalRuns(checks: SeedCheck[], window: SeedWindow): number {
  return checks.reduce((n, c) => n + runCount(c, window), 0);
}

/**
 * Inserts generated runs straight into the store in large blocks. Each block carries a deduplication token
 * derived from the seed, so running the same seed again adds nothing.
 */
export async function seedBulk(
  store: Store,
  accountId: string,
  checks: SeedCheck[],
  window: SeedWindow,
  onProgress: (rows: number) => void = () => {},
  blockRows = 200_000,
): Promise<number> {
  let total = 0;
  let block: ResultRow[] = [];
  let blockNo = 0;
  // One insert in flight while the next block is generated: the engine works on its own threads.
  let pending: Promise<void> = Promise.resolve();
  const flush = async () => {
    if (!block.length) return;
    const rows = block;
    const token = `seed:${accountId}:${window.seed}:${window.from}:${window.to}:${blockNo++}`;
    block = [];
    await pending;
    pending = store.insert('check_results', ROW_COLUMNS, rows, { settings: { insert_deduplication_token: token }, purpose: 'ingest' }).then(() => {
      total += rows.length;
      onProgress(rows.length);
    });
  };
  for (const [index, check] of checks.entries()) {
    for (const item of generateRuns(check, window, index)) {
      block.push(toRow(accountId, item.id!, item));
      if (block.length >= blockRows) await flush();
    }
  }
  await flush();
  await pending;
  return total;
}
