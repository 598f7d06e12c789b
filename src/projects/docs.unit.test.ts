import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { KINDS } from './kinds.js';
import { RESOURCE_TYPES } from './model.js';

const doc = readFileSync(path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../docs/projects.md'), 'utf8');
/** docs/projects.md's list of resource types, from its heading line to the next section. */
const section = doc.slice(doc.indexOf('Resource types (`resources[].type`)'), doc.indexOf('## Deployments'));

describe('docs/projects.md', () => {
  it('names every resource type a deploy takes, and says which are refused, as the deployer does', () => {
    expect(section.length).toBeGreaterThan(100);
    const refused = section.slice(section.indexOf('- Refused'));
    for (const type of RESOURCE_TYPES) {
      expect(section, type).toContain(`\`${type}\``);
      const kind = KINDS[type] as { unsupported?: string };
      // Refused types are listed under "Refused", deployed ones above it.
      expect(refused.includes(`\`${type}\``), `${type} listed as refused`).toBe(kind.unsupported !== undefined);
    }
  });
});
