import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** Every file under `dir` whose name ends with `suffix`. */
function filesEndingWith(dir: string, suffix: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && e.name.endsWith(suffix))
    .map((e) => path.join(e.parentPath, e.name));
}

/** What a unit test may not import: a running service, or a connection to Postgres, Redis or the engine. */
const SERVICE_IMPORTS =
  /from ['"](?:[./]*test\/support\/service(?:\.js)?|[./]*\/(?:storage\/(?:postgres|redis|deps)|storage\/clickhouse\/(?:store|embedded|server))(?:\.js)?|postgres|ioredis|chdb|bullmq)['"]/;

describe('test lanes', () => {
  it('unit tests (*.unit.test.ts) start no service and open no Postgres, Redis or engine', () => {
    const units = filesEndingWith(path.join(root, 'src'), '.unit.test.ts');
    expect(units.length).toBeGreaterThan(10);
    const offenders = units.filter((file) => SERVICE_IMPORTS.test(readFileSync(file, 'utf8'))).map((f) => path.relative(root, f));
    expect(offenders).toEqual([]);
  });

  it('the rule catches what it is for', () => {
    expect(SERVICE_IMPORTS.test("import { startTestService } from '../../test/support/service.js';")).toBe(true);
    expect(SERVICE_IMPORTS.test("import { connectPostgres } from '../storage/postgres.js';")).toBe(true);
    expect(SERVICE_IMPORTS.test("import { Redis } from 'ioredis';")).toBe(true);
    expect(SERVICE_IMPORTS.test("import { OutboundPolicy } from './outbound.js';")).toBe(false);
  });
});
