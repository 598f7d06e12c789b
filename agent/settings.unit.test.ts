import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadAgentConfig } from '../src/platform/config.js';
import { AGENT_SETTINGS, agentHelp } from './settings.js';

describe("the agent's --help", () => {
  it('lists every setting the agent reads, and docs/agent.md lists the same', () => {
    // Every name loadAgentConfig asks its environment for.
    const read = new Set<string>();
    const env = new Proxy({ API_KEY: `pl_${'a'.repeat(48)}`, API_URL: 'https://monitoring.example.com' } as Record<string, string>, {
      get(target, name) {
        if (typeof name === 'string') read.add(name);
        return target[name as string];
      },
    });
    loadAgentConfig(env);
    const listed = AGENT_SETTINGS.map((s) => s.name);
    expect(read.size).toBeGreaterThan(10);
    for (const name of read) expect(listed, name).toContain(name);
    // And the runner's own (sandbox/sandbox.ts reads them from process.env).
    const sandbox = readFileSync(path.join(import.meta.dirname, '../src/run-kernel/browser/sandbox.ts'), 'utf8');
    for (const [, name] of sandbox.matchAll(/process\.env\.([A-Z_]+)/g)) expect(listed, name).toContain(name);
    const help = agentHelp('9.9.9');
    for (const name of listed) expect(help).toContain(name);
    const docs = readFileSync(path.join(import.meta.dirname, '../docs/agent.md'), 'utf8');
    for (const name of listed) expect(docs, name).toContain(`\`${name}\``);
  });
});
