import { mkdirSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Session } from 'chdb';
import { OUTPUT_SETTINGS, parseJsonFormat } from '../../src/storage/clickhouse/store.js';

const ESCAPES: Record<string, string> = { t: '\t', n: '\n', r: '\r', '0': '\0', b: '\b', f: '\f' };

/**
 * The client sends a String parameter in ClickHouse's escaped text form; the embedded binding escapes
 * string values itself, so those are unescaped first. Other types (numbers, UUIDs, dates, arrays) pass as sent.
 */
function unescapeString(value: string): string {
  return value.replace(/\\(.)/g, (_, c: string) => ESCAPES[c] ?? c);
}

function parameterTypes(sql: string): Map<string, string> {
  return new Map([...sql.matchAll(/\{(\w+):([^}]+)\}/g)].map((m) => [m[1], m[2].trim()]));
}

/**
 * Answers the part of ClickHouse's HTTP interface that @clickhouse/client uses (ping, queries with
 * `param_*` values, commands, and INSERT ... FORMAT with the rows in the body) by running each request on
 * the embedded engine. It lets the server backend be tested for real where no ClickHouse server exists.
 */
export async function startClickHouseShim(dataDir: string): Promise<{ url: string; close: () => Promise<void> }> {
  mkdirSync(dataDir, { recursive: true });
  const session = new Session(dataDir, { connectionArgs: Object.entries(OUTPUT_SETTINGS).map(([k, v]) => `--${k}=${v}`) });
  const RESERVED = new Set(['query_id', 'database', 'query', 'session_id', 'role']);

  const read = (req: IncomingMessage) =>
    new Promise<Buffer>((resolve, reject) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => resolve(Buffer.concat(chunks)));
      req.on('error', reject);
    });

  const server: Server = createServer(async (req, res) => {
    const url = new URL(req.url ?? '/', 'http://shim');
    if (url.pathname === '/ping') {
      res.end('Ok.\n');
      return;
    }
    try {
      const body = await read(req);
      const params: Record<string, string> = {};
      const settings: Record<string, string> = {};
      for (const [key, value] of url.searchParams) {
        if (key.startsWith('param_')) params[key.slice(6)] = value;
        else if (!RESERVED.has(key)) settings[key] = value;
      }
      const inUrl = url.searchParams.get('query') ?? '';
      const insert = /^\s*INSERT INTO\s+(\S+)\s*(?:\(([^)]*)\))?\s*FORMAT\s+(\w+)\s*$/i.exec(inUrl);
      if (insert) {
        const columns = insert[2]?.split(',').map((c) => c.trim().replace(/^`|`$/g, ''));
        const summary = await session.insert({
          table: insert[1].replace(/`/g, ''),
          ...(columns ? { columns } : {}),
          values: body,
          format: insert[3] as 'JSONCompactEachRow',
          settings,
        });
        res.setHeader('x-clickhouse-summary', JSON.stringify({ written_rows: String(summary.rowsWritten) }));
        res.end();
        return;
      }
      let sql = `${inUrl}\n${body.toString('utf8')}`.trim();
      let format = 'TabSeparated';
      const fmt = /\s+FORMAT\s+(\w+)\s*$/i.exec(sql);
      if (fmt) {
        format = fmt[1];
        sql = sql.slice(0, fmt.index);
      }
      const types = parameterTypes(sql);
      for (const [name, value] of Object.entries(params)) {
        if (/^(Nullable\(|LowCardinality\()*String\)*$/.test(types.get(name) ?? '')) params[name] = unescapeString(value);
      }
      // A server's summary counts rows scanned; chdb's rowsRead counts rows returned. FORMAT JSON carries
      // the scanned count in its statistics, so JSONEachRow is answered from a JSON result.
      if (format === 'JSONEachRow') {
        const result = await session.queryBindAsync(sql, params, { format: 'JSON' });
        const text = result.text();
        const parsed = text ? parseJsonFormat<unknown>(text) : { data: [], statistics: { rows_read: 0, elapsed: 0 } };
        res.setHeader(
          'x-clickhouse-summary',
          JSON.stringify({
            read_rows: String(parsed.statistics.rows_read),
            elapsed_ns: String(Math.round(parsed.statistics.elapsed * 1e9)),
          }),
        );
        res.setHeader('x-clickhouse-format', format);
        res.end(parsed.data.map((row) => `${JSON.stringify(row)}\n`).join(''));
        return;
      }
      const result = await session.queryBindAsync(sql, params, { format });
      res.setHeader('x-clickhouse-summary', JSON.stringify({ elapsed_ns: String(Math.round(result.elapsed * 1e9)) }));
      res.setHeader('x-clickhouse-format', format);
      res.end(Buffer.from(result.bytes()));
    } catch (err) {
      res.statusCode = 500;
      res.setHeader('x-clickhouse-exception-code', String((err as { clickhouseCode?: number }).clickhouseCode ?? 1000));
      res.end((err as Error).message);
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: async () => {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      session.close();
    },
  };
}
