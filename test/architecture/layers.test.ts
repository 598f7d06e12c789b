import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ENTRY, LAYERS, layerViolations } from './layers.js';

const root = path.resolve(import.meta.dirname, '../..');

describe('folder order', () => {
  it('no file under src/ imports a folder above its own, and no two folders import each other', async () => {
    const { violations, pairs, files } = await layerViolations(root);
    expect(files).toBeGreaterThan(100);
    expect(violations.map((v) => `${v.file} -> ${v.imports} (${v.from} above ${v.to}?)`)).toEqual([]);
    expect(pairs).toEqual([]);
  });

  it('every folder under src/ has its place in the order', () => {
    const folders = readdirSync(path.join(root, 'src'), { withFileTypes: true }).filter((d) => d.isDirectory()).map((d) => d.name);
    expect(folders.filter((f) => !(LAYERS as readonly string[]).includes(f))).toEqual([]);
    expect(LAYERS.filter((l) => !folders.includes(l))).toEqual([]);
  });

  it('docs/architecture.md lists the same order', () => {
    const doc = readFileSync(path.join(root, 'docs/architecture.md'), 'utf8');
    const section = doc.slice(doc.indexOf('## Folder order'));
    const rows = [...section.matchAll(/^\| (\d+) \| `([^`]+)` \|/gm)].map((m) => m[2].replace(/\/$/, ''));
    expect(rows).toEqual([...LAYERS, ENTRY]);
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
      const { violations, pairs } = await layerViolations(fixture);
      expect(violations).toEqual([{ from: 'model', to: 'ops', file: 'model/a.ts', imports: 'ops/b.ts' }]);
      expect(pairs).toEqual(['model<->ops']);
    });
  });
});
