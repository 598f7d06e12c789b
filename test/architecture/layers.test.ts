import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ENTRY, importGraph, LAYERS, layerViolations, sqlInRouteFiles } from './layers.js';

const root = path.resolve(import.meta.dirname, '../..');

describe('folder order', () => {
  it('no file under src/ imports a folder above its own, and no two folders import each other', async () => {
    const { violations, pairs, files } = await layerViolations(root);
    expect(files).toBeGreaterThan(100);
    expect(violations.map((v) => `${v.file} -> ${v.imports} (${v.from} above ${v.to}?)`)).toEqual([]);
    expect(pairs).toEqual([]);
  });

  it('no import cycle anywhere: src, agent, workers, bench, test (the same graph, built once)', async () => {
    expect((await importGraph(root)).cycles).toEqual([]);
  });

  it('a feature folder (one with an index.ts) is imported by others only through its index', async () => {
    const { pastIndex } = await layerViolations(root);
    expect(pastIndex).toEqual([]);
  });

  it('every folder under src/ has its place in the order', () => {
    const folders = readdirSync(path.join(root, 'src'), { withFileTypes: true })
      .filter((d) => d.isDirectory())
      .map((d) => d.name);
    expect(folders.filter((f) => !(LAYERS as readonly string[]).includes(f))).toEqual([]);
    expect(LAYERS.filter((l) => !folders.includes(l))).toEqual([]);
  });

  it('docs/architecture.md lists the same order', () => {
    const doc = readFileSync(path.join(root, 'docs/architecture.md'), 'utf8');
    const section = doc.slice(doc.indexOf('## Folder order'));
    const rows = [...section.matchAll(/^\| (\d+) \| `([^`]+)` \|/gm)].map((m) => m[2].replace(/\/$/, ''));
    expect(rows).toEqual([...LAYERS, ENTRY]);
  });

  it('files that define routes hold no SQL: statements live in repositories', () => {
    expect(sqlInRouteFiles(root)).toEqual([]);
  });

  describe('the check itself', () => {
    const fixture = mkdtempSync(path.join(tmpdir(), 'layers-'));
    afterAll(() => rmSync(fixture, { recursive: true, force: true }));

    it('finds an import that points up, and a pair of folders that import each other', async () => {
      const write = (file: string, text: string) => {
        mkdirSync(path.dirname(path.join(fixture, file)), { recursive: true });
        writeFileSync(path.join(fixture, file), text);
      };
      writeFileSync(path.join(fixture, 'tsconfig.json'), JSON.stringify({ compilerOptions: { module: 'NodeNext', moduleResolution: 'NodeNext' } }));
      write('src/model/a.ts', "import { b } from '../ops/b.js';\nexport const a = b + 1;\n");
      write('src/ops/b.ts', 'export const b = 1;\n');
      write('src/ops/c.ts', "import { a } from '../model/a.js';\nexport const c = a;\n");
      write('src/model/a.test.ts', "import { c } from '../ops/c.js';\nexport const t = c;\n");
      write('src/ops/index.ts', "export { c } from './c.js';\n");
      write('src/seed/d.ts', "import { c } from '../ops/index.js';\nimport { b } from '../ops/b.js';\nexport const d = b + c;\n");
      const { violations, pairs, pastIndex } = await layerViolations(fixture);
      expect(violations).toEqual([{ from: 'model', to: 'ops', file: 'model/a.ts', imports: 'ops/b.ts' }]);
      expect(pairs).toEqual(['model<->ops']);
      // ops/ has an index: seed/d.ts may import it, not ops/b.ts past it; model/a.ts reaching past it is counted too.
      expect(pastIndex.sort()).toEqual(['model/a.ts -> ops/b.ts', 'seed/d.ts -> ops/b.ts']);
    });

    it('finds a statement in a file that defines routes, and none in a repository', () => {
      const write = (file: string, text: string) => {
        mkdirSync(path.dirname(path.join(fixture, file)), { recursive: true });
        writeFileSync(path.join(fixture, file), text);
      };
      write('src/ops/routes.ts', 'export const r = [defineRoute({ handler: () => sql<Row[]>`select 1`, other: tx`select 2` })];\n');
      write('src/ops/repository.ts', 'export const q = () => sql`select 1`;\n');
      write('src/ops/format.ts', 'export const f = defineRoute({ handler: () => html`<p>not SQL</p>` });\n');
      expect(sqlInRouteFiles(fixture)).toEqual(['ops/routes.ts: 2']);
    });
  });
});
