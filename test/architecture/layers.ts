import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import madge from 'madge';
import ts from 'typescript';

/**
 * The folders under src/, lowest first. A file may import its own folder and the folders below it, never
 * one above: docs/architecture.md shows the same list, and `layers.test.ts` keeps both true.
 * Files directly under src/ are the process assembly (entries, wiring): they sit on top.
 */
export const LAYERS = [
  'model',
  'platform',
  'storage',
  'live',
  'http',
  'pages',
  'accounts',
  'private-locations',
  'checks',
  'run-kernel',
  'ingest',
  'coverage',
  'state',
  'heartbeats',
  'runners',
  'alerts',
  'analytics',
  'resources',
  'test-sessions',
  'rca',
  'agents',
  'dashboards',
  'status-pages',
  'projects',
  'secret-scans',
  'ops',
  'mcp',
  'console',
  'seed',
] as const;

export const ENTRY = '(src)';

/** The folder a src-relative path belongs to: its first segment, or ENTRY for files directly under src/. */
export function folderOf(file: string): string {
  const parts = file.split('/');
  return parts.length > 1 ? parts[0] : ENTRY;
}

export interface Violation {
  from: string;
  to: string;
  file: string;
  imports: string;
}

/** The project's import graph (src, workers, bench, test; paths relative to `root`), built once per root and process. */
const graphs = new Map<string, ReturnType<typeof buildGraph>>();
async function buildGraph(root: string) {
  const dirs = ['src', 'agent', 'workers', 'bench', 'test'].filter((d) => existsSync(path.join(root, d)));
  const result = await madge(
    dirs.map((d) => path.join(root, d)),
    { baseDir: root, fileExtensions: ['ts'], tsConfig: path.join(root, 'tsconfig.json') },
  );
  return { graph: result.obj(), cycles: result.circular() };
}
export const importGraph = (root: string) => {
  let built = graphs.get(root);
  if (!built) graphs.set(root, (built = buildGraph(root)));
  return built;
};

/** Every import of a non-test file under src/ that points to a folder above its own (or to an unknown folder). */
export async function layerViolations(root: string): Promise<{ violations: Violation[]; pairs: string[]; files: number; pastIndex: string[] }> {
  const whole = (await importGraph(root)).graph;
  // src/ only, as paths inside it; test files may import anything.
  const graph: Record<string, string[]> = {};
  for (const [file, deps] of Object.entries(whole)) {
    if (!file.startsWith('src/') || file.endsWith('.test.ts')) continue;
    graph[file.slice(4)] = deps.filter((d) => d.startsWith('src/')).map((d) => d.slice(4));
  }
  const rank = (folder: string) => (folder === ENTRY ? LAYERS.length : (LAYERS as readonly string[]).indexOf(folder));
  const violations: Violation[] = [];
  const edges = new Set<string>();
  const inSrc = (file: string) => !file.startsWith('..') && !file.endsWith('.test.ts');
  const files = Object.keys(graph).filter(inSrc);
  for (const file of files) {
    const from = folderOf(file);
    for (const target of graph[file].filter(inSrc)) {
      const to = folderOf(target);
      if (to === from) continue;
      edges.add(`${from}>${to}`);
      if (rank(from) < 0 || rank(to) < 0 || rank(to) > rank(from)) violations.push({ from, to, file, imports: target });
    }
  }
  const pairs = [...edges]
    .filter((e) => {
      const [a, b] = e.split('>');
      return a < b && edges.has(`${b}>${a}`);
    })
    .map((e) => e.replace('>', '<->'));
  // A folder with an index.ts is a feature: other folders import only its index (what it says others may use).
  const features = new Set(files.filter((f) => /^[^/]+\/index\.ts$/.test(f)).map(folderOf));
  const pastIndex: string[] = [];
  for (const file of files) {
    for (const target of graph[file].filter(inSrc)) {
      const to = folderOf(target);
      if (to !== folderOf(file) && features.has(to) && target !== `${to}/index.ts`) pastIndex.push(`${file} -> ${target}`);
    }
  }
  return { violations, pairs, files: files.length, pastIndex };
}

/** The tags a Postgres statement is written with: the pool or transaction handle, by the names the code gives them. */
const SQL_TAGS = new Set(['sql', 'db', 'tx', 'sp', 'trx', 'deps.sql', 'opts.sql']);

/**
 * Files under src/ that define routes or pages (call `defineRoute` or `definePage`) and also hold a SQL statement (a tagged template on one of
 * SQL_TAGS): statements live in repositories (docs/architecture.md), so a route file reads and writes through them.
 * Answers `file: n` for each such file.
 */
export function sqlInRouteFiles(root: string): string[] {
  const src = path.join(root, 'src');
  const files = readdirSync(src, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && e.name.endsWith('.ts') && !e.name.endsWith('.test.ts'))
    .map((e) => path.join(e.parentPath, e.name));
  const found: string[] = [];
  for (const file of files) {
    const text = readFileSync(file, 'utf8');
    if (!text.includes('defineRoute(') && !text.includes('definePage(')) continue;
    const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
    let statements = 0;
    const visit = (node: ts.Node) => {
      if (ts.isTaggedTemplateExpression(node) && SQL_TAGS.has(node.tag.getText(source).replace(/<[\s\S]*>$/, ''))) statements++;
      ts.forEachChild(node, visit);
    };
    visit(source);
    if (statements) found.push(`${path.relative(src, file)}: ${statements}`);
  }
  return found.sort();
}
