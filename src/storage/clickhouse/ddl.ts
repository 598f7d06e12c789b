import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { clusterStatements } from './cluster.js';
import type { Store } from './store.js';

export const CLICKHOUSE_SQL_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../sql/clickhouse');

export interface DdlSettings {
  retentionDays: number;
  rollupRetentionDays: { hour: number; day: number };
  /** Set: the statements as a cluster runs them (cluster.ts). */
  cluster?: string;
  /** `ticks`: the rollup tables' views are dropped instead of created (a process fills the tables once a minute). */
  rollups?: 'views' | 'ticks';
}

/** The views that fill the rollup tables (`check_results_1<tier>`) on every insert, and a change of their query. */
const ROLLUP_VIEW = /^CREATE MATERIALIZED VIEW IF NOT EXISTS (\w+) TO check_results_1[a-z]+ AS\n[\s\S]*$/;
const ROLLUP_VIEW_QUERY = /^ALTER TABLE check_results_1[a-z]+_mv MODIFY QUERY\n/;

/**
 * The statements for a way of filling the rollups: with `ticks`, the views are dropped where they would be created,
 * and changes to their query left out (the ticks read the query from the code: analytics/rollups.ts rollupSelect).
 */
export function forRollups(statements: readonly string[], rollups: 'views' | 'ticks' = 'views'): string[] {
  if (rollups === 'views') return [...statements];
  return statements.filter((statement) => !ROLLUP_VIEW_QUERY.test(statement)).map((statement) => statement.replace(ROLLUP_VIEW, 'DROP VIEW IF EXISTS $1'));
}

/** The statements of every file of sql/clickhouse, in name order, with the settings filled in. */
export async function clickhouseStatements(settings: DdlSettings): Promise<string[]> {
  const values: Record<string, number> = {
    retention_days: settings.retentionDays,
    rollup_hour_retention_days: settings.rollupRetentionDays.hour,
    rollup_day_retention_days: settings.rollupRetentionDays.day,
  };
  for (const [name, v] of Object.entries(values)) if (!Number.isInteger(v) || v < 1) throw new Error(`${name} must be a positive integer`);
  const files = (await readdir(CLICKHOUSE_SQL_DIR)).filter((f) => f.endsWith('.sql')).sort();
  const statements: string[] = [];
  for (const file of files) {
    let text = await readFile(path.join(CLICKHOUSE_SQL_DIR, file), 'utf8');
    for (const [name, v] of Object.entries(values)) text = text.replaceAll(`{{${name}}}`, String(v));
    const body = text
      .split('\n')
      .filter((line) => !line.trim().startsWith('--'))
      .join('\n');
    statements.push(
      ...body
        .split(';')
        .map((s) => s.trim())
        .filter(Boolean),
    );
  }
  if (settings.cluster) return clusterStatements(statements, settings.cluster);
  return forRollups(statements, settings.rollups);
}

/**
 * Applies every statement of sql/clickhouse in order; each is idempotent (IF NOT EXISTS). DDL takes no
 * query parameters, so the settings it needs are spliced as validated integers.
 */
export async function applyClickhouseDdl(store: Store, settings: DdlSettings): Promise<void> {
  for (const statement of await clickhouseStatements(settings)) await store.command(statement);
}
