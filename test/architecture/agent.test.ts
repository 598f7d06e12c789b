import path from 'node:path';
import madge from 'madge';
import { describe, expect, it } from 'vitest';

const root = path.resolve(import.meta.dirname, '../..');

/** What a process loads at run time from `entry` (type-only imports are erased, so they do not count). */
async function loaded(entry: string): Promise<string[]> {
  const graph = (
    await madge(path.join(root, entry), {
      baseDir: root,
      fileExtensions: ['ts'],
      tsConfig: path.join(root, 'tsconfig.json'),
      detectiveOptions: { ts: { skipTypeImports: true }, es6: { skipTypeImports: true } },
    })
  ).obj();
  return Object.keys(graph);
}

/** The folder a loaded file counts in: `agent/`, or the folder under `src/`. */
const roomOf = (file: string) => (file.startsWith('src/') ? `src/${file.split('/')[1]}` : file.split('/')[0]!);

describe('the rooms the agent is built from', () => {
  it("the agent (agent/) loads only itself, the run kernel, the model and the platform: nothing of the service's stores, queues or features", async () => {
    const files = await loaded('agent/main.ts');
    expect(files).toContain('src/run-kernel/runner.ts');
    expect(files).toContain('agent/http-port.ts');
    expect([...new Set(files.map(roomOf))].sort()).toEqual(['agent', 'src/model', 'src/platform', 'src/run-kernel']);
  });

  it('the run kernel (src/run-kernel/) loads only itself, the model and the platform: a port is its only way to the service', async () => {
    const files = await loaded('src/run-kernel/index.ts');
    expect([...new Set(files.map(roomOf))].sort()).toEqual(['src/model', 'src/platform', 'src/run-kernel']);
  });
});
