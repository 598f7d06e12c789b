import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { nodeHeapFlags, SEMI_SPACE_MB } from './heap.js';

describe('the heap flags the service starts with', () => {
  const scripts = (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { scripts: Record<string, string> }).scripts;

  it.each(['start', 'runner', 'worker'])('`npm run %s` starts node with them', (name) => {
    const command = scripts[name].split('&&').at(-1)!.trim().split(/\s+/);
    expect(command[0]).toBe('tsx');
    expect(command.slice(1, 1 + nodeHeapFlags.length)).toEqual([...nodeHeapFlags]);
  });

  it("asks for semi-spaces larger than V8's own 16 MB", () => {
    expect(SEMI_SPACE_MB).toBeGreaterThan(16);
  });
});
