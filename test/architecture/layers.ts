import madge from 'madge';
import path from 'node:path';

/**
 * The folders under src/, lowest first. A file may import its own folder and the folders below it, never
 * one above: docs/architecture.md shows the same list, and `layers.test.ts` keeps both true.
 * Files directly under src/ are the process assembly (entries, wiring): they sit on top.
 */
export const LAYERS = [
  'model',
  'platform',
  'storage',
  'accounts',
  'live',
  'http',
  'checks',
  'incidents',
  'ingest',
  'state',
  'heartbeats',
  'runners',
  'alerts',
  'analytics',
  'resources',
  'projects',
  'dashboards',
  'status-pages',
  'ops',
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

/** Every import of a non-test file under src/ that points to a folder above its own (or to an unknown folder). */
export async function layerViolations(root: string): Promise<{ violations: Violation[]; pairs: string[]; files: number }> {
  const graph = (await madge(path.join(root, 'src'), {
    fileExtensions: ['ts'],
    tsConfig: path.join(root, 'tsconfig.json'),
    excludeRegExp: [/\.test\.ts$/],
  })).obj();
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
  const pairs = [...edges].filter((e) => { const [a, b] = e.split('>'); return a < b && edges.has(`${b}>${a}`); }).map((e) => e.replace('>', '<->'));
  return { violations, pairs, files: files.length };
}
