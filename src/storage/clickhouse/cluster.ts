/**
 * The DDL of sql/clickhouse, as a cluster runs it (CLICKHOUSE_CLUSTER): every table becomes `<name>_local`,
 * created ON CLUSTER with the Replicated engine of its kind, and a Distributed table of the original name in
 * front, so the service's SQL reads and writes the same names. Rows are sharded by check
 * (`cityHash64(check_id)`): one check's runs and its rollups live on one shard, so a report reads one shard's
 * worth of parts and each shard's views aggregate complete checks. docs/scaling.md has the topology.
 */

const CREATE_TABLE = /^CREATE TABLE IF NOT EXISTS (\w+)\s*\n/;
const CREATE_VIEW = /^CREATE MATERIALIZED VIEW IF NOT EXISTS (\w+) TO (\w+) AS\n([\s\S]*)$/;
const ALTER = /^ALTER TABLE (\w+)\s+([\s\S]*)$/;
const ENGINE = /ENGINE = (\w*)MergeTree\b/;

const shardKey = (body: string) => (/\bcheck_id UUID\b/.test(body) ? 'cityHash64(check_id)' : 'cityHash64(key)');

export function clusterStatements(statements: readonly string[], cluster: string): string[] {
  if (!/^[A-Za-z_][A-Za-z0-9_]{0,63}$/.test(cluster)) throw new Error(`Invalid cluster name: ${cluster}`);
  const on = `ON CLUSTER ${cluster}`;
  const out: string[] = [];
  for (const statement of statements) {
    const table = CREATE_TABLE.exec(statement);
    if (table) {
      const name = table[1];
      const local = statement
        .replace(CREATE_TABLE, `CREATE TABLE IF NOT EXISTS ${name}_local ${on}\n`)
        .replace(ENGINE, (_, kind: string) => `ENGINE = Replicated${kind}MergeTree('/clickhouse/tables/{shard}/{database}/${name}_local', '{replica}')`)
        // Replicated tables deduplicate inserts by their own window (replicated_deduplication_window).
        .replace(/\nSETTINGS non_replicated_deduplication_window = \d+/, '');
      out.push(local);
      out.push(
        `CREATE TABLE IF NOT EXISTS ${name} ${on} AS ${name}_local\nENGINE = Distributed(${cluster}, currentDatabase(), ${name}_local, ${shardKey(statement)})`,
      );
      continue;
    }
    const view = CREATE_VIEW.exec(statement);
    if (view) {
      // Each shard's view aggregates the runs that shard stores into its own rollup table.
      const select = view[3].replace(/\bFROM check_results\b/g, 'FROM check_results_local');
      out.push(`CREATE MATERIALIZED VIEW IF NOT EXISTS ${view[1]} ${on} TO ${view[2]}_local AS\n${select}`);
      continue;
    }
    const alter = ALTER.exec(statement);
    if (alter) {
      out.push(`ALTER TABLE ${alter[1]}_local ${on} ${alter[2]}`);
      // A new column must exist on the Distributed table too; projections and indexes live on the local tables.
      if (/^ADD COLUMN/.test(alter[2].trim())) out.push(`ALTER TABLE ${alter[1]} ${on} ${alter[2]}`);
      continue;
    }
    out.push(statement);
  }
  return out;
}
