import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Store } from './store.js';
import { clusterStatements } from './cluster.js';

export const CLICKHOUSE_SQL_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../sql/clickhouse');

export interface DdlSettings {
  retentionDays: number;
  rollupRetentionDays: { hour: number; day: number };
  /** Set: the statements as a cluster runs them (cluster.ts). */
  cluster?: string;
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
    statements.push(...body.split(';').map((s) => s.trim()).filter(Boolean));
  }
  return settings.cluster ? clusterStatements(statements, settings.cluster) : statements;
}

/**
 * Applies every statement of sql/clickhouse in order; each is idempotent (IF NOT EXISTS). DDL takes no
 * query parameters, so the settings it needs are spliced as validated integers.
 */
export async function applyClickhouseDdl(store: Store, settings: DdlSettings): Promise<void> {
  for (const statement of await clickhouseStatements(settings)) await store.command(statement);
}
