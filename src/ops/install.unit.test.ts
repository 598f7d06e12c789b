import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const json = (file: string) => JSON.parse(readFileSync(path.join(ROOT, file), 'utf8')) as Record<string, unknown>;

describe('installing the service', () => {
  it('sends no install telemetry: Scarf, which Swagger UI pulls in, is turned off where it looks', () => {
    // @scarf/scarf's postinstall reports unless the root package says scarfSettings.enabled = false.
    const lock = json('package-lock.json') as { packages: Record<string, unknown> };
    expect(Object.keys(lock.packages)).toContain('node_modules/@scarf/scarf');
    expect(json('package.json').scarfSettings).toEqual({ enabled: false });
    const report = readFileSync(path.join(ROOT, 'node_modules/@scarf/scarf/report.js'), 'utf8');
    expect(report).toContain('rootPackage.scarfSettings.enabled === false');
  });
});
