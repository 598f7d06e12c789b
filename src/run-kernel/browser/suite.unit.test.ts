import { describe, expect, it } from 'vitest';
import { workPath } from './sandbox.js';
import { readTestCommand, shellWords } from './suite.js';

describe("a check suite's testCommand", () => {
  it("reads the forms the anchor CLI writes, keeping Playwright options and dropping the sandbox's", () => {
    expect(readTestCommand("npx playwright test --config 'e2e/playwright.config.ts' --project 'chromium' 'mobile chrome' --grep '@smoke|@api'", '.')).toEqual({
      ok: true,
      config: 'e2e/playwright.config.ts',
      args: ['--project', 'chromium', 'mobile chrome', '--grep', '@smoke|@api'],
    });
    expect(readTestCommand('pnpm exec playwright test --config=pw.config.ts --workers 4 --reporter=html tests/a.spec.ts', 'app')).toEqual({
      ok: true,
      config: 'app/pw.config.ts',
      args: ['tests/a.spec.ts'],
    });
    expect(readTestCommand(undefined, undefined)).toEqual({ ok: true, config: 'playwright.config.ts', args: [] });
  });

  it('refuses anything but `playwright test`: other programs, chains, substitutions', () => {
    for (const cmd of [
      'npm test',
      'npx playwright test; curl x',
      'npx playwright test $(id)',
      'node run.js',
      'bash -c "npx playwright test"',
      'npx playwright test "unclosed',
    ]) {
      expect(readTestCommand(cmd, '.'), cmd).toMatchObject({ ok: false });
    }
    expect(shellWords(`a "b \\"c\\"" 'd e' f\\ g`)).toEqual(['a', 'b "c"', 'd e', 'f g']);
  });

  it("keeps script files inside the run's work directory", () => {
    expect(workPath('/w', 'a/b.ts')).toBe('/w/a/b.ts');
    expect(workPath('/w', './a.ts')).toBe('/w/a.ts');
    for (const bad of ['../x.ts', '/etc/passwd', 'a/../../x', '..', '.', '']) expect(workPath('/w', bad), bad).toBeNull();
  });
});
