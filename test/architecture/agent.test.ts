import path from 'node:path';
import madge from 'madge';
import { describe, expect, it } from 'vitest';

const root = path.resolve(import.meta.dirname, '../..');

/** What the agent process loads at run time (type-only imports are erased, so they do not count). */
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

describe('the runner port', () => {
  it("an agent loads nothing of the service's stores, ingest, live messages or features: only the runner, the model and the platform", async () => {
    const files = await loaded('workers/agent.ts');
    expect(files).toContain('src/runners/runner.ts');
    expect(files).toContain('src/runners/agent/http-port.ts');
    const folders = new Set(files.filter((f) => f.startsWith('src/')).map((f) => f.split('/')[1]));
    expect([...folders].sort()).toEqual(['model', 'platform', 'runners']);
    // Within runners/, none of the service's side: the run book, the local port, the scheduler, definitions from Postgres.
    expect(files.filter((f) => /runners\/(book|local-port|scheduler|definitions|adhoc|sessions|health|routes|on-demand|repository)\.ts$/.test(f))).toEqual([]);
  });
});
