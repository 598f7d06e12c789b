import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Store } from './store.js';

export const CLICKHOUSE_SQL_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../sql/clickhouse');

/**
 * Applies every file of sql/clickhouse in name order; each statement is idempotent (IF NOT EXISTS).
 * DDL takes no query parameters, so the one setting it needs is spliced as a validated integer.
 */
export async function applyClickhouseDdl(store: Store, retentionDays: number): Promise<void> {
  if (!Number.isInteger(retentionDays) || retentionDays < 1) throw new Error('retentionDays must be a positive integer');
  const files = (await readdir(CLICKHOUSE_SQL_DIR)).filter((f) => f.endsWith('.sql')).sort();
  for (const file of files) {
    const text = (await readFile(path.join(CLICKHOUSE_SQL_DIR, file), 'utf8')).replaceAll('{{retention_days}}', String(retentionDays));
    const body = text
      .split('\n')
      .filter((line) => !line.trim().startsWith('--'))
      .join('\n');
    for (const statement of body.split(';').map((s) => s.trim()).filter(Boolean)) await store.command(statement);
  }
}
