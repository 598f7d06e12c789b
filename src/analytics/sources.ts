import { toClickHouseTime } from '../model/time.js';
import type { QueryParams } from '../storage/clickhouse/store.js';
import { type Part, part, rawAggregate, type SourcePlan } from './rollups.js';

/** A grouping key of an aggregated query: how rollup rows and raw rows each compute it. */
export interface Key {
  alias: string;
  rollup: string;
  raw: string;
}

export interface UnionSpec {
  /** Conditions every source shares (account, check or checks, status), on columns both raw and rollup rows have. */
  where: string[];
  keys: Key[];
  /** The metric columns the outer query reads, and which of their parts. */
  columns: Map<string, Set<Part>>;
  plan: SourcePlan;
}

/**
 * One FROM subquery holding, per key, the partial aggregates of every source of the plan: rollup rows
 * as stored (one SELECT per tier, over its ranges) and raw rows aggregated to the same shape (one SELECT over all
 * raw ranges), UNION ALL. The caller merges them: sums of counts and sums, min of mins, max of maxes, and
 * the -Merge of variance and sketch states.
 */
export function unionOfSources(spec: UnionSpec): { sql: string; params: QueryParams } {
  const params: QueryParams = {};
  const measures = [...spec.columns].flatMap(([column, parts]) => [...parts].map((p) => ({ column, p })));
  const selects: string[] = [];
  // One SELECT per tier, its ranges OR'd (a reporting window split by a zone's calendar has one range per bucket).
  const tiers = new Map<string, { table: string; ranges: string[] }>();
  spec.plan.rollups.forEach((r, i) => {
    params[`r${i}from`] = toClickHouseTime(r.from).slice(0, 19);
    params[`r${i}to`] = toClickHouseTime(r.to).slice(0, 19);
    const tier = tiers.get(r.tier.id) ?? { table: r.tier.table, ranges: [] };
    tier.ranges.push(`(bucket >= {r${i}from:DateTime('UTC')} AND bucket < {r${i}to:DateTime('UTC')})`);
    tiers.set(r.tier.id, tier);
  });
  for (const { table, ranges } of tiers.values()) {
    const list = [
      ...spec.keys.map((k) => `${k.rollup} AS ${k.alias}`),
      'runs',
      'if(has_failures, 0, runs) AS passed',
      'retried',
      ...measures.map(({ column, p }) => part(column, p)),
    ];
    selects.push(
      `SELECT ${list.join(', ')} FROM ${table} WHERE ${[...spec.where, ranges.length === 1 ? ranges[0].slice(1, -1) : `(${ranges.join(' OR ')})`].join(' AND ')}`,
    );
  }
  if (spec.plan.raw.length) {
    const ranges = spec.plan.raw.map((r, i) => {
      params[`w${i}from`] = toClickHouseTime(r.from);
      params[`w${i}to`] = toClickHouseTime(r.to);
      return `(started_at >= {w${i}from:DateTime64(3, 'UTC')} AND started_at < {w${i}to:DateTime64(3, 'UTC')})`;
    });
    const list = [
      ...spec.keys.map((k) => `${k.raw} AS ${k.alias}`),
      'count() AS runs',
      'countIf(NOT has_failures) AS passed',
      'countIf(attempts > 1) AS retried',
      ...measures.map(({ column, p }) => `${rawAggregate(column, p)} AS ${part(column, p)}`),
    ];
    const groupBy = spec.keys.length ? ` GROUP BY ${spec.keys.map((k) => k.alias).join(', ')}` : '';
    selects.push(`SELECT ${list.join(', ')} FROM check_results WHERE ${[...spec.where, `(${ranges.join(' OR ')})`].join(' AND ')}${groupBy}`);
  }
  return { sql: `(\n  ${selects.join('\n  UNION ALL\n  ')}\n)`, params };
}
